"""The Chinese text of every label :mod:`rmqlib.viz` draws, keyed by its English (see :mod:`rmqlib.viz.i18n`).

``ZH`` maps an English message (``str.format`` fields in braces; plotly's own ``%{...}`` doubled
where the message has fields) to its Chinese. ``PATTERNS["zh"]`` maps text with numbers of its own
(a chapter's computed title, a rebalance step's detail) to Chinese with the same fields.
Terms follow ``i18n/zh/terms.yml``; Java names, ids, queue names and numbers stay as they are.
"""

from __future__ import annotations

ZH: dict[str, str] = {
    # ------------------------------------------------------------------ shared words
    ", ": "，",
    "; ": "；",
    "{label}: {title}": "{label}：{title}",
    "{label}: ": "{label}：",
    "{name} (seed {seed})": "{name}（随机种子 {seed}）",
    "consumer": "消费者",
    "consumers": "消费者",
    "queues": "队列",
    "topic": "主题",
    "nobody": "无人持有",
    "strategy": "分配策略",
    "virtual nodes": "虚拟节点",
    "step": "步骤",
    "seed": "随机种子",
    "messages": "消息数",
    "broker": "Broker",
    "simulated time (s)": "模拟时间（秒）",
    "queue offset": "队列位点",
    "cannot draw this: {error}": "无法绘制：{error}",

    # ------------------------------------------------------------------ figures.py: allocations
    "{k} idle": "{k} 个空闲",
    "{k} holds {size}": "{k} 个持有 {size} 个",
    "{k} hold {size}": "{k} 个各持有 {size} 个",
    "{q} queue over {c} consumer: {counts}": "{q} 个队列分给 {c} 个消费者：{counts}",
    "{q} queues over {c} consumer: {counts}": "{q} 个队列分给 {c} 个消费者：{counts}",
    "{q} queue over {c} consumers: {counts}": "{q} 个队列分给 {c} 个消费者：{counts}",
    "{q} queues over {c} consumers: {counts}": "{q} 个队列分给 {c} 个消费者：{counts}",
    "; {n} queue unowned": "；{n} 个队列无人持有",
    "; {n} queues unowned": "；{n} 个队列无人持有",
    "; {n} owned twice": "；{n} 个被重复持有",
    "{cid} (idle)": "{cid}（空闲）",
    "unowned<br>%{customdata}<extra></extra>": "无人持有<br>%{customdata}<extra></extra>",
    "queues (Java sort order)": "队列（按 Java 排序）",
    "consumers (Java sort order)": "消费者（按 Java 排序）",
    "Queues per consumer: {counts} (max - min = {spread})": "每个消费者的队列数：{counts}（最多减最少 = {spread}）",
    "%{x}: %{y} queues<extra></extra>": "%{x}：%{y} 个队列<extra></extra>",
    "fair share {fair:.2f}": "平均份额 {fair:.2f}",
    "queues held": "持有的队列数",
    # the ring
    "{v} virtual nodes: the ring is empty, so no consumer gets a queue":
        "{v} 个虚拟节点：哈希环为空，没有消费者分到队列",
    "{c} consumers x {v} virtual nodes, {q} queues: {counts} (max - min = {spread})":
        "{c} 个消费者 × {v} 个虚拟节点，{q} 个队列：{counts}（最多减最少 = {spread}）",
    "ring": "哈希环",
    "{cid} vnodes": "{cid} 的虚拟节点",
    "virtual node of {cid}<extra></extra>": "{cid} 的虚拟节点<extra></extra>",
    "%{customdata[0]}<br>owner: %{customdata[1]}<extra></extra>":
        "%{customdata[0]}<br>持有者：%{customdata[1]}<extra></extra>",
    "CONSISTENT_HASH: median max - min goes from {first} at {v0} vnode(s) to {last} at {v1} "
    "({c} consumers, {q} queues, {s} random consumer sets)":
        "CONSISTENT_HASH：不均衡度中位数从 {v0} 个虚拟节点时的 {first} 降到 {v1} 个时的 {last}"
        "（{c} 个消费者，{q} 个队列，{s} 组随机消费者）",
    "min..max over consumer sets": "各组消费者的最小值到最大值",
    "median": "中位数",
    "each queue to a random consumer": "每个队列随机分给一个消费者",
    "virtual nodes per consumer": "每个消费者的虚拟节点数",
    "max - min queues per consumer": "不均衡度（每个消费者队列数的最多减最少）",
    "Queues moved when one consumer joins ({q} queues): AVG moved {avg} in total, consistent hash {ch}":
        "加入一个消费者时迁移的队列数（{q} 个队列）：AVG 共迁移 {avg} 个，一致性哈希 {ch} 个",
    "newcomer's fair share": "新成员的平均份额",
    "consumers before one more joins": "新成员加入前的消费者数",
    "queues that change owner": "迁移的队列数",
    "{strategy} over {t} topics: {counts} queues in total (max - min = {spread})":
        "{strategy} 分配 {t} 个主题：合计 {counts} 个队列（最多减最少 = {spread}）",
    "{topic}<br>%{{x}}: %{{y}} queues<extra></extra>": "{topic}<br>%{{x}}：%{{y}} 个队列<extra></extra>",
    # machine rooms
    "{q} queues in {r} rooms: {x} consumed from another room": "{q} 个队列分布在 {r} 个机房：{x} 个由其他机房的消费者消费",
    ", {n} consumed by nobody": "，{n} 个无人消费",
    "; consumers: {counts}": "；消费者：{counts}",
    "cross-room": "跨机房",
    "{cid}<br>{n} queues<extra></extra>": "{cid}<br>{n} 个队列<extra></extra>",
    "consumer (queues)": "消费者（队列数）",
    "{strategy}: nothing to allocate": "{strategy}：没有可分配的内容",
    "no broker in any room: RebalanceImpl skips the topic": "所有机房都没有 Broker：RebalanceImpl 跳过这个主题",
    "no consumer in any room: RebalanceImpl skips the topic": "所有机房都没有消费者：RebalanceImpl 跳过这个主题",

    # ------------------------------------------------------------------ panels.py
    "queues per broker": "每个 Broker 的队列数",
    "consumer idcs": "消费者所在机房",
    "{room} brokers": "{room} Broker 数",
    "{room} consumers": "{room} 消费者数",

    # ------------------------------------------------------------------ process_queue.py
    "acknowledged": "已确认",
    "in msgTreeMap": "在 msgTreeMap 中",
    "offset %{x}: %{customdata}<extra></extra>": "位点 %{x}：%{customdata}<extra></extra>",
    "offsets": "位点",
    "in msgTreeMap (pulled, not acknowledged)": "在 msgTreeMap 中（已拉取，未确认）",
    "acknowledged at this step": "本步确认",
    "commit offset {commit}": "可提交位点 {commit}",
    "{n} messages pulled (offsets {first}..{last}); none acknowledged": "已拉取 {n} 条消息（位点 {first}..{last}）；尚未确认任何一条",
    "step {step}: offset {last} acknowledged; {left} left in the tree; removeMessage returned {commit} "
    "(lowest unacknowledged)":
        "第 {step} 步：位点 {last} 已确认；树中还剩 {left} 条；removeMessage 返回 {commit}（最小的未确认位点）",
    "step {step}: offset {last} acknowledged; {left} left in the tree; removeMessage returned {commit} "
    "(lowest unacknowledged: none left, so queueOffsetMax + 1)":
        "第 {step} 步：位点 {last} 已确认；树中还剩 {left} 条；removeMessage 返回 {commit}"
        "（已无未确认消息，所以是 queueOffsetMax + 1）",
    "slow message": "慢消息",
    "◀ undo": "◀ 撤销",
    "acknowledge next ▶": "确认下一条 ▶",
    "reset": "重置",

    # ------------------------------------------------------------------ handover.py
    "Step 0/{last} · {n} consumers, before the round: they run it in the order {order}":
        "第 0/{last} 步 · {n} 个消费者，重平衡之前：按 {order} 的顺序执行",
    "Step {k}/{last} · {cid}{where} · {action}": "第 {k}/{last} 步 · {cid}{where} · {action}",
    "{head}: {detail}": "{head}：{detail}",
    "pull {offset}": "拉取 {offset}",
    "dropped, still in the table": "已丢弃，仍在表中",
    "dropped": "已丢弃",
    "dropped<br>%{y}<extra></extra>": "已丢弃<br>%{y}<extra></extra>",
    "committed offset": "已提交位点",
    " (lock: {holder})": "（锁：{holder}）",
    "committed at the broker<br>%{y}: %{text}<extra></extra>": "Broker 上已提交<br>%{y}：%{text}<extra></extra>",
    "this step": "本步",
    "{cid}<br>offset %{{y}} at %{{x:.3f}} s<extra></extra>": "{cid}<br>位点 %{{y}}，%{{x:.3f}} 秒<extra></extra>",
    "consumed more than once": "重复消费",
    "offset %{y} again at %{x:.3f} s<extra></extra>": "位点 %{y} 在 %{x:.3f} 秒再次消费<extra></extra>",
    " {old} drops it, {new} takes it": " {old} 放弃，{new} 接手",
    "{old} drops it ": "{old} 放弃 ",
    " {new} takes it": " {new} 接手",
    "{queue} moves from {old} to {new}: {n} message consumed twice":
        "{queue} 从 {old} 交接给 {new}：{n} 条消息重复消费",
    "{queue} moves from {old} to {new}: {n} messages consumed twice":
        "{queue} 从 {old} 交接给 {new}：{n} 条消息重复消费",
    "consumed by": "消费者",
    # the steps of a rebalance round (rmqlib.client.rebalance.STEP_ACTIONS)
    "drop": "丢弃",
    "persist offset": "持久化位点",
    "remove offset": "移除位点",
    "unlock": "解锁",
    "keep dropped": "保留已丢弃的队列",
    "remove from table": "从表中移除",
    "lock refused": "加锁被拒",
    "remove dirty offset": "清除过期位点",
    "start offset": "起始位点",
    "no start offset": "没有起始位点",
    "new pull request": "新建拉取请求",
    "rebalance later": "稍后再重平衡",
    "new pop request": "新建 Pop 请求",
    # their details (the ones with numbers are in PATTERNS)
    "not in the new allocation": "不在新的分配结果中",
    "not in the broker's assignment": "不在 Broker 的分配结果中",
    "not in the broker's pop assignment": "不在 Broker 的 Pop 分配结果中",
    "pull expired (no pull for more than 120 s)": "拉取过期（超过 120 秒没有拉取）",
    "pop expired (no pop for more than 120 s)": "Pop 过期（超过 120 秒没有 Pop）",
    "a listener call is in progress, so it stays, dropped, until later": "监听器调用尚未结束，队列以已丢弃状态留到以后",
    "another consumer holds the broker lock": "Broker 上的锁由另一个消费者持有",
    "computing the start offset failed, so the queue waits": "计算起始位点失败，队列等待",
    "no start offset, so the queue waits for a later round": "没有起始位点，队列等待下一轮",
    "no offset in memory: nothing sent": "内存中没有位点：什么也没发送",
    "no listener call in progress": "没有进行中的监听器调用",
    "forget any offset held in memory from an earlier ownership": "丢弃之前持有时留在内存中的位点",

    # ------------------------------------------------------------------ timeline.py
    "events": "事件",
    "join": "加入",
    "leave": "离开",
    "notify": "通知",
    "rebalance": "重平衡",
    "channel closed": "连接关闭",
    "channel expired": "连接过期",
    "topic change": "主题变更",
    "route": "路由更新",
    "route removed": "路由移除",
    "broker down": "Broker 宕机",
    "broker up": "Broker 恢复",
    "heartbeat": "心跳",
    "find consumer ids": "查询消费者列表",
    "take": "接手",
    "lock": "加锁",
    "pull": "拉取",
    "pull held": "拉取挂起",
    "reput": "消息写入",
    "pull answered": "拉取返回",
    "{kind} at %{{customdata[0]}} ms<br>%{{customdata[1]}} %{{customdata[2]}}<extra></extra>":
        "{kind}，%{{customdata[0]}} 毫秒<br>%{{customdata[1]}} %{{customdata[2]}}<extra></extra>",
    "no owner (pause)": "无人持有（消费停顿）",
    "no owner<br>%{customdata[0]}<br>%{customdata[1]} .. %{customdata[2]} ms<extra></extra>":
        "无人持有<br>%{customdata[0]}<br>%{customdata[1]} .. %{customdata[2]} 毫秒<extra></extra>",
    "{name} (seed {seed}): who owned which queue; total pause {total:.1f} s, longest {longest:.1f} s, "
    "{overlaps} overlap(s)":
        "{name}（随机种子 {seed}）：各队列由谁持有；消费停顿共 {total:.1f} 秒，最长 {longest:.1f} 秒，重叠 {overlaps} 次",
    "lock: {cid}": "锁：{cid}",
    "consumed: {cid}": "消费：{cid}",
    "{cid} consumed %{{customdata[1]}} at %{{customdata[0]}} ms<extra></extra>":
        "{cid} 在 %{{customdata[0]}} 毫秒消费 %{{customdata[1]}} 条<extra></extra>",
    "{name} (seed {seed}): broker lock table (bars) and listener calls (ticks); broker lock expiry {expiry:.0f} s":
        "{name}（随机种子 {seed}）：Broker 锁表（条形）与监听器调用（刻度）；Broker 锁过期时间 {expiry:.0f} 秒",
    "msg/s": "条/秒",
    "%{y}<br>from %{x} s: %{z} msg/s<extra></extra>": "%{y}<br>从 %{x} 秒起：%{z} 条/秒<extra></extra>",
    "load": "负载",
    "{name} (seed {seed}): messages consumed per second, {window:g} s averages; idle: {idle}":
        "{name}（随机种子 {seed}）：每秒消费的消息数，{window:g} 秒平均；空闲：{idle}",
    "Latency, store to consume: ": "延迟（从存储到消费）：",
    "{label} p50 {p50:.0f} ms, p99 {p99:.0f} ms": "{label} p50 {p50:.0f} 毫秒，p99 {p99:.0f} 毫秒",
    "latency (ms, log scale)": "延迟（毫秒，对数坐标）",
    "latency (ms)": "延迟（毫秒）",
    "fraction of messages": "消息占比",
    "%{x}: mean %{y}<extra></extra>": "%{x}：平均 %{y}<extra></extra>",
    "{y} vs {x} ({seeds} seed per value, box = spread over seeds)":
        "{y} 随 {x} 的变化（每个取值 {seeds} 个随机种子，箱线 = 各种子的分布）",
    "{y} vs {x} ({seeds} seeds per value, box = spread over seeds)":
        "{y} 随 {x} 的变化（每个取值 {seeds} 个随机种子，箱线 = 各种子的分布）",
    "{y} vs {x} ({seeds} seed per value, bar = min..max over seeds)":
        "{y} 随 {x} 的变化（每个取值 {seeds} 个随机种子，误差线 = 各种子的最小值到最大值）",
    "{y} vs {x} ({seeds} seeds per value, bar = min..max over seeds)":
        "{y} 随 {x} 的变化（每个取值 {seeds} 个随机种子，误差线 = 各种子的最小值到最大值）",
    "delivery %{customdata[0]} at %{customdata[1]} ms<br>from %{customdata[2]}<extra></extra>":
        "第 %{customdata[0]} 次投递，%{customdata[1]} 毫秒<br>来自 %{customdata[2]}<extra></extra>",
    "{topic} after {n} retries": "重试 {n} 次后进入 {topic}",
    "dead-letter queue": "死信队列",
    "When a message that keeps failing is delivered again, and where it ends": "一条总是消费失败的消息何时被再次投递，最后去了哪里",
    "time since the first delivery (s, log scale; the first delivery drawn at 0.5 s)":
        "距首次投递的时间（秒，对数坐标；首次投递画在 0.5 秒处）",
    "retries": "重试",

    # ------------------------------------------------------------------ sequence.py
    "membership": "成员变化",
    "pulling": "拉取",
    "part of the loop": "所属环节",
    "; first {n} of {total} events": "；只显示 {total} 个事件中的前 {n} 个",
    "The run's own log, {start}-{end} ms ({name}, seed {seed}{left_out})":
        "这次运行自己的日志，{start}-{end} 毫秒（{name}，随机种子 {seed}{left_out}）",
    "findConsumerIdList {topic}, {n} member(s)": "findConsumerIdList {topic}，{n} 个成员",
    "pull {queue} from {offset}": "拉取 {queue}，从位点 {offset} 起",
    "{queue} {n} message(s)": "{queue} {n} 条消息",
    "hold {queue}": "挂起 {queue}",
    "HEART_BEAT (to every broker)": "HEART_BEAT（发往每个 Broker）",

    # ------------------------------------------------------------------ predict.py
    "your answer": "你的答案",
    "Check": "核对",
    "<b>Predict:</b> {question}": "<b>先预测：</b>{question}",
    "Predict: {question}": "先预测：{question}",
    "Pick an answer first: the point is to commit before you see.": "请先选一个答案：关键是在看到结果之前先下判断。",
    "Right.": "答对了。",
    "Not quite: the model says {answer}.": "不对：模型给出的是 {answer}。",
    "{head} {why}": "{head}{why}",
    "<div class='rmqlib-predict'><p><b>Predict:</b> {question}</p>{options}<details><summary>Show the answer"
    "</summary><p>The model says <b>{answer}</b>. {why}</p></details></div>":
        "<div class='rmqlib-predict'><p><b>先预测：</b>{question}</p>{options}<details><summary>查看答案"
        "</summary><p>模型给出的是 <b>{answer}</b>。{why}</p></details></div>",
}

PATTERNS: dict[str, dict[str, str]] = {"zh": {
    # details of rebalance steps (rmqlib.client.rebalance), with the numbers of the run
    "first pull from offset {offset}, {delay} ms later": "{delay} 毫秒后从位点 {offset} 开始第一次拉取",
    "first pop {delay} ms later": "{delay} 毫秒后第一次 Pop",
    "offset {offset} sent to the broker": "位点 {offset} 已发送给 Broker",
    "a lock was refused, so another round in {delay} ms": "加锁被拒，{delay} 毫秒后再来一轮",
    "forced, more than {delay} ms since its last lock": "强制解锁：距上次加锁已超过 {delay} 毫秒",
    "{offset} (the offset committed at the broker)": "{offset}（Broker 上已提交的位点）",
    "{offset} (none committed, {where} -> the first offset)": "{offset}（没有已提交位点，{where} -> 第一个位点）",
    "{offset} (none committed, {where} on a retry topic -> the max offset)":
        "{offset}（没有已提交位点，{where}，重试主题 -> 最大位点）",
    "{offset} (none committed, {where} -> the first stored at {ts} ms)":
        "{offset}（没有已提交位点，{where} -> {ts} 毫秒时存储的第一条）",
    "{offset} (none committed, {where} on a retry topic -> 0)": "{offset}（没有已提交位点，{where}，重试主题 -> 0）",
    "{offset} (none committed, {where} -> the max offset)": "{offset}（没有已提交位点，{where} -> 最大位点）",
}}
