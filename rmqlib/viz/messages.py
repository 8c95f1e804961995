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
    "pull woken": "唤醒挂起的拉取",
    "pop": "Pop 拉取",
    "revive": "重新可见（revive）",
    "balanced": "已均衡",
    "unbalanced": "未均衡",
    "{time} ms · {kind} · {who} {label}": "{time} 毫秒 · {kind} · {who} {label}",
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
        "{y}随{x}的变化（每个取值 {seeds} 个随机种子，箱线表示各种子间的分布）",
    "{y} vs {x} ({seeds} seeds per value, box = spread over seeds)":
        "{y}随{x}的变化（每个取值 {seeds} 个随机种子，箱线表示各种子间的分布）",
    "{y} vs {x} ({seeds} seed per value, bar = min..max over seeds)":
        "{y}随{x}的变化（每个取值 {seeds} 个随机种子，误差线为各种子中的最小值到最大值）",
    "{y} vs {x} ({seeds} seeds per value, bar = min..max over seeds)":
        "{y}随{x}的变化（每个取值 {seeds} 个随机种子，误差线为各种子中的最小值到最大值）",
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
    "{t} ms": "{t} 毫秒",
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
    # ------------------------------------------------------------------ designs.py (chapter 11c)
    "imbalance (most - fewest)": "不均衡度（最多减最少）",
    "moved when one joins": "加入一个时迁移的队列数",
    "moved when one leaves": "离开一个时迁移的队列数",
    "%{{y}}: %{{x}} queues<extra>{metric}</extra>": "%{{y}}：%{{x}} 个队列<extra>{metric}</extra>",
    "{c} consumers, {q} queues: fewest possible moves are {least_out} on a join, {least_in} on a leave":
        "{c} 个消费者，{q} 个队列：加入一个时至少迁移 {least_out} 个，离开一个时至少迁移 {least_in} 个",
    "decided by {who}": "决策方：{who}",
    "x the fewest moves": "倍于最少迁移数",
    "x the fair share": "倍于平均份额",
    "Stickiness against balance: each design over the whole grid": "粘性与均衡的取舍：每种设计在整个参数网格上的表现",
    "moved on a join (x the fewest, log)": "加入一个时迁移的队列数（最少值的倍数，对数）",
    "worst peak load (x the fair share)": "最坏峰值负载（平均份额的倍数）",
    "After a crash and a scale-out: pause and duplicates per design": "宕机和扩容之后：每种设计的消费停顿与重复消费",
    "pause (queue-ms, log; 0 at 1)": "消费停顿（队列·毫秒，对数；0 画在 1 处）",
    "pause (queue-ms)": "消费停顿（队列·毫秒）",
    "After a crash and a scale-out: pause, queues paused and duplicates per design":
        "宕机和扩容之后：每种设计的消费停顿、停顿的队列数与重复消费",
    "queues paused": "停顿的队列数",
    "pause (queue-ms, log)": "消费停顿（队列·毫秒，对数）",
    "duplicates": "重复消费",
    # design names and who decides (rmqlib.designs.compare.DESIGNS)
    "ours: sticky": "本书：粘性分配",
    "ours: bounded hash": "本书：有界负载哈希",
    "ours: sticky, own memory": "本书：粘性分配，各自记忆",
    "ours: sticky, shared memory": "本书：粘性分配，共享记忆",
    "RocketMQ broker-side (Pop)": "RocketMQ Broker 端分配（Pop）",
    "Kafka eager (range)": "Kafka eager 协议（RangeAssignor）",
    "Kafka cooperative (cooperative-sticky)": "Kafka cooperative 协议（CooperativeStickyAssignor）",
    "Kafka KIP-848 (uniform)": "Kafka KIP-848 协议（UniformAssignor）",
    "longest (ms)": "最长停顿（毫秒）",
    "paused": "停顿的队列数",
    "RocketMQ broker AVG": "RocketMQ Broker 端 AVG",
    "Kafka range": "Kafka RangeAssignor",
    "Kafka roundrobin": "Kafka RoundRobinAssignor",
    "Kafka sticky": "Kafka StickyAssignor",
    "Kafka cooperative-sticky": "Kafka CooperativeStickyAssignor",
    "Kafka uniform (KIP-848)": "Kafka UniformAssignor（KIP-848）",
    "Kafka range (KIP-848)": "Kafka 服务端 RangeAssignor（KIP-848）",
    "every client": "每个客户端",
    "an operator": "运维人员",
    "elected member": "选出的成员",
    "scale-out": "扩容",

    # ------------------------------------------------------------------ text the chapters pass in
    # (titles, axis titles, sweep columns and variants, predictions): the Chinese notebook runs the same code
    "variant": "变体",
    "long": "长轮询",
    "short": "短轮询",
    "crash": "宕机",
    "host loss": "主机失联",
    "client rebalance": "客户端重平衡",
    "stopped": "正常停止",
    "vanished": "主机失联",
    "read count first": "先改读队列数",
    "write count first": "先改写队列数",
    "4 -> 8 queues on broker-a": "broker-a 从 4 个队列增加到 8 个",
    "broker-c joins with 4 queues": "broker-c 带 4 个队列加入",
    "concurrent (16 retries)": "并发消费（重试 16 次）",
    "orderly (default: no limit)": "顺序消费（默认：不限次数）",
    "6 consumers, 4 queues": "6 个消费者，4 个队列",
    "Pop": "Pop 消费",
    "orderly, maxReconsumeTimes=5": "顺序消费，maxReconsumeTimes=5",
    "AVG: 8 queues, 3 consumers. Each row is one consumer's own answer": "AVG：8 个队列，3 个消费者。每一行是一个消费者自己算出的结果",
    "messages per second per queue": "每个队列每秒的消息数",
    "p99 latency (ms)": "p99 延迟（毫秒）",
    "pulls per message (log)": "每条消息的拉取次数（对数）",
    "longest pause (ms)": "最长消费停顿（毫秒）",
    "rebalance wait interval (ms)": "重平衡等待间隔（毫秒）",
    "longest pause after a host loss (ms)": "主机失联后的最长消费停顿（毫秒）",
    "queues handed over on scale-out": "扩容时交接的队列数",
    "max - min messages per consumer": "各消费者消息数的最多减最少",
    "notifications sent during start-up": "启动期间发出的通知数",
    "topic_grows (seed 1): broker-a goes from 4 to 8 queues at 60 s": "topic_grows（随机种子 1）：broker-a 在 60 秒时从 4 个队列增加到 8 个",
    "when the queues are added (s after 60 s)": "新增队列的时刻（60 秒之后的秒数）",
    "longest wait for an owner (s)": "等待持有者的最长时间（秒）",
    "New queues wait for a route poll and then a rebalance: from a few seconds to over 40": "新队列要先等一次路由轮询，再等一次重平衡：从几秒到 40 多秒",
    "messages consumed twice": "重复消费的消息数",
    "Duplicates while the members disagree about the queue list": "成员对队列列表看法不一致时的重复消费",
    "messages never consumed": "从未被消费的消息数",
    "Shrinking broker-a from 4 to 2 queues: the order decides what is stranded": "把 broker-a 从 4 个队列缩到 2 个：修改顺序决定哪些消息被滞留",
    "sends that failed": "发送失败的次数",
    "broker-b goes down at 70 s: sends to a stopped broker are retried, to a vanished one they fail": "broker-b 在 70 秒时下线：发往正常停止的 Broker 的消息会重试，发往失联 Broker 的则失败",
    "broker_vanishes (seed 0): broker-b's host is lost at 70 s": "broker_vanishes（随机种子 0）：broker-b 的主机在 70 秒时失联",
    "consumers that consumed nothing": "什么也没消费的消费者数",
    "QUERY_ASSIGNMENT in POP mode, popShareQueueNum=1: six consumers share four queues": "POP 模式下的 QUERY_ASSIGNMENT，popShareQueueNum=1：六个消费者共享四个队列",
    "Two subscribers and one assign-mode member in one group: queues nobody reads": "同一个组里有两个订阅者和一个 assign 模式的成员：有队列无人读取",
    "Broadcasting: every consumer holds every queue of the topic": "广播消费：每个消费者都持有主题的全部队列",
    # predictions: questions, choices and the reason shown with the verdict
    "A topic has 10 queues and the group 4 consumers, allocated with AVG. How many queues does the first consumer in sort order get?":
        "一个主题有 10 个队列，消费者组有 4 个消费者，用 AVG 分配。排序后的第一个消费者分到几个队列？",
    "10 = 4 x 2 + 2: every consumer gets 2, and the first 10 % 4 = 2 consumers in sort order one more.":
        "10 = 4 × 2 + 2：每个消费者先分到 2 个，排序靠前的 10 % 4 = 2 个消费者再各多分 1 个。",
    "32 queues, 7 consumers on the ring (10 virtual nodes each); an 8th consumer joins. How many queues change owner?":
        "32 个队列，哈希环上有 7 个消费者（各 10 个虚拟节点）；第 8 个消费者加入。有多少个队列换了持有者？",
    "4 or fewer": "4 个或更少",
    "5 to 16": "5 到 16 个",
    "more than 16": "超过 16 个",
    "Only the queues on the arcs just before the newcomer's virtual nodes move, about its fair share (32 / 8 = 4). AVG re-cuts every block: 22 of the 32 queues move.":
        "只有落在新成员虚拟节点前面那几段弧上的队列会迁移，大约是它的平均份额（32 / 8 = 4）。AVG 会把每一段都重新切分：32 个队列中有 22 个迁移。",
    "Three consumers, all in IDC1, where there is no broker. IDC2 and IDC3 each have one broker with four queues and no consumer. With MACHINE_ROOM_NEARBY-AVG, how many queues does each consumer get, in sort order?":
        "三个消费者都在 IDC1，那里没有 Broker。IDC2 和 IDC3 各有一个带四个队列的 Broker，没有消费者。用 MACHINE_ROOM_NEARBY-AVG 时，按排序每个消费者各分到几个队列？",
    "Each consumer-less room is shared by everyone, but each room on its own: 2 + 1 + 1 twice. The first consumer gets the remainder of both rooms.":
        "没有消费者的机房由所有消费者共同分担，但每个机房单独分：两次都是 2 + 1 + 1。两个机房的余数都给了第一个消费者。",
    "The late member keeps the bigger block it had with 3 members: the queues at its edges are also in its neighbours' new blocks, and the ones it should now hold are in nobody's.":
        "还没收到通知的成员仍按 3 个成员时的大块来算：它边上的队列也在邻居的新块里，而它现在本该持有的队列却不在任何人的块里。",
    "Four consumers share eight queues; at 60 s one of them crashes (its process dies, the machine stays up). How long do its queues go without an owner?":
        "四个消费者共享八个队列；60 秒时其中一个宕机（进程退出，机器还在）。它的队列会有多久无人持有？",
    "under a second": "不到一秒",
    "about 20 s": "约 20 秒",
    "about 2 minutes": "约 2 分钟",
    "The kernel closes the dead process's sockets, the brokers see the close, notify the survivors, and they rebalance at once. Only a host that vanishes silently makes the group wait for timers.":
        "操作系统内核会关闭退出进程的连接，Broker 看到连接关闭后通知存活的消费者，它们立刻重平衡。只有悄无声息地失联的主机，才会让整个组去等定时器。",
    "Messages at offsets 100 to 107 are being consumed on 20 threads. Offsets 102, 101 and 107 finish first. Which offset may the consumer commit now?":
        "位点 100 到 107 的消息正在 20 个线程上消费。位点 102、101 和 107 先消费完。消费者现在可以提交哪个位点？",
    "The committed offset is the lowest one not yet acknowledged: 100 is still running, so committing anything higher could skip it after a crash.":
        "提交的位点是尚未确认的最小位点：100 还在消费，提交更大的位点可能让它在宕机后被跳过。",
    "The newcomer 10.0.0.3 runs its round first. How many messages of queue 4 will it consume again?":
        "新成员 10.0.0.3 先执行重平衡。队列 4 中有多少条消息会被它重复消费？",
    "It starts from the broker's committed offset, 105, while the old owner had reached 112: the 7 messages consumed since their offset last reached the broker are consumed again.":
        "它从 Broker 上已提交的位点 105 开始，而原持有者已经消费到 112：位点上次同步到 Broker 之后消费的 7 条消息会被重复消费。",
    "A concurrent consumer's listener fails on one message every time. How long after its first delivery does the message land in %DLQ%<group>?":
        "一个并发消费者的监听器每次处理某条消息都失败。首次投递之后多久，这条消息会进入 %DLQ%<group>？",
    "about 3 minutes": "约 3 分钟",
    "about 4 h 45 min": "约 4 小时 45 分",
    "a day or more": "一天或更久",
    "16 retries at levels 3 to 18: 10 s + 30 s + 1 min + 2 min + ... + 30 min + 1 h + 2 h = 4 h 45 min 40 s.":
        "16 次重试，延迟级别 3 到 18：10 秒 + 30 秒 + 1 分 + 2 分 + …… + 30 分 + 1 小时 + 2 小时 = 4 小时 45 分 40 秒。",
    "A consumer pulls an empty queue at 2 000 ms and no message arrives. When does the broker answer the pull?":
        "消费者在 2 000 毫秒时拉取一个空队列，之后一直没有消息到达。Broker 什么时候响应这次拉取？",
    "It holds the pull for 15 s, but only the scan, every 5 s, looks at held pulls: the first scan after 17 000 ms is at 20 000 ms.":
        "Broker 把拉取请求挂起 15 秒，但只有每 5 秒一次的扫描会检查挂起的请求：17 000 毫秒之后的第一次扫描在 20 000 毫秒。",
    "Three orderly consumers share eight queues; at 60 s one of them crashes, and the brokers are told at once. How long do its queues wait for a new owner?":
        "三个顺序消费的消费者共享八个队列；60 秒时其中一个宕机，Broker 立刻得知。它的队列要等多久才有新的持有者？",
    "20 to 60 s": "20 到 60 秒",
    "more than a minute": "超过一分钟",
    "The survivors are notified at once, but the broker keeps the dead consumer's locks until 60 s after its last renewal, and renewals come every 20 s: 40 to 60 s.":
        "存活的消费者立刻收到通知，但 Broker 会把已退出消费者的锁保留到它最后一次续期后的 60 秒，而续期每 20 秒一次：所以是 40 到 60 秒。",
    "A consumer's host vanishes from the network (no socket is closed). With the default timers, how long do its queues go without an owner?":
        "一个消费者的主机从网络上消失（没有任何连接被关闭）。在默认定时器下，它的队列会有多久无人持有？",
    "90 to 150 s": "90 到 150 秒",
    "Nobody is told: a broker drops the channel only when its 10 s scan finds it silent for more than 120 s, and the survivors notice at their next 20 s round.":
        "没有人收到通知：Broker 每 10 秒扫描一次，发现连接沉默超过 120 秒才会移除它，存活的消费者要到下一次 20 秒一轮的重平衡才会察觉。",
    "An operator raises broker-a's queues of a topic from 4 to 8 while four consumers read it. However the moment of the change falls against the clients' timers, how long can a new queue wait for an owner?":
        "运维把某主题在 broker-a 上的队列从 4 个增加到 8 个，此时有四个消费者在消费。无论这次变更落在客户端定时器的哪个时刻，新队列最长可能要等多久才有持有者？",
    "about a second": "约一秒",
    "up to about 50 s": "最长约 50 秒",
    "minutes": "几分钟",
    "A consumer sees the new route only at its next route poll (every 30 s) and takes a new queue only at its next rebalance after that (every 20 s). Depending on where the change falls, that is a few seconds or close to 50.":
        "消费者要到下一次路由轮询（每 30 秒）才看到新路由，再到其后的下一次重平衡（每 20 秒）才接手新队列。取决于变更落在哪个时刻，可能只要几秒，也可能接近 50 秒。",
    "Six Pop consumers share a topic of four queues. How many of them consume nothing?":
        "六个 Pop 消费者共享一个有四个队列的主题。其中有几个什么也消费不到？",
    "Pop hands out messages, not queues: every consumer pops from every queue. With client-side rebalance two of the six would sit idle.":
        "Pop 分发的是消息而不是队列：每个消费者都从每个队列 Pop。如果用客户端重平衡，六个中会有两个空闲。",
    "Three consumers broadcast a topic for 60 s; a fourth joins at 30 s with an empty offset file. Of the messages produced during the run, how many does the fourth consume?":
        "三个消费者以广播方式消费一个主题 60 秒；第四个在 30 秒时加入，位点文件是空的。运行期间生产的消息中，第四个消费了多少？",
    "all of them": "全部",
    "about half": "大约一半",
    "none": "一条也没有",
    "With no offset of its own, CONSUME_FROM_LAST_OFFSET starts it at each queue's end: it sees only what is produced after it joined, about half of a run it joined halfway through.":
        "它没有自己的位点，CONSUME_FROM_LAST_OFFSET 让它从每个队列的末尾开始：它只能看到加入之后生产的消息，而它在运行到一半时加入，所以大约一半。",
    "Four consumers share 16 queues with the sticky strategy, each remembering its own last answer, and they agree. A fifth joins, remembering nothing. After three more rebalance rounds, how many queues have no owner?":
        "四个消费者用粘性分配共享 16 个队列，各自记得自己上一次的结果，而且彼此一致。第五个加入，什么也不记得。再经过三轮重平衡后，有几个队列无人持有？",
    "The old members keep their queues and leave the newcomer what they can spare; the newcomer, remembering nothing, takes AVG's block. Each answer is stable from its own memory, so the gap (and an overlap as large) never closes.":
        "老成员保留自己的队列，只把能让出的留给新成员；新成员什么也不记得，就拿了 AVG 算出的那一块。每个结果从它自己的记忆看都是稳定的，所以这个空缺（以及同样大的重叠）一直不会消失。",
    "How many of the eight queues end up owned more than once or by nobody?": "八个队列中，最后有几个被重复持有或无人持有？",
    "Each consumer believes it is first in the list, so all three take the first block: 3 queues are owned three times, 5 by nobody. Sorting both lists is what makes the answers fit (question 1).":
        "每个消费者都以为自己排在列表第一位，于是三个都拿了第一块：3 个队列被持有三次，5 个无人持有。正是对两个列表排序，才让各自的结果拼得起来（问题 1）。",
    "Two consumers share 16 partitions in a Kafka group on the eager protocol, and two more join. How many of the 16 partitions stop, however briefly?":
        "两个消费者在一个使用急切式协议的 Kafka 消费组中分摊 16 个分区，又有两个消费者加入。16 个分区中有多少个会停下来，哪怕只停一小会儿？",
    "Each member gives up everything it owns before it rejoins (ConsumerCoordinator.onJoinPrepare), so every partition stops until the new assignment arrives, even one that goes back to the member that had it.":
        "每个成员在重新加入之前都会交出自己持有的全部分区（ConsumerCoordinator.onJoinPrepare），所以每个分区都要停到新的分配结果到来，哪怕它最后又回到原来的成员手里。",
    "In scenarios.host_loss() a host vanishes at 60 s. Its queues' pause starts then. When does it end?":
        "在 scenarios.host_loss() 中，一台主机在 60 秒时失联，它的队列从此开始消费停顿。停顿什么时候结束？",
    "about 80 s": "约 80 秒",
    "between 150 and 200 s": "150 到 200 秒之间",
    "never, in this run": "在这次运行中一直没有结束",
    "The broker drops the silent channel at the first 10 s scan more than 120 s after the last heartbeat, and a survivor takes the queues at its next 20 s round.":
        "在最后一次心跳 120 秒之后的第一次扫描（每 10 秒一次）时，Broker 移除这条沉默的连接；存活的消费者在下一次 20 秒一轮的重平衡时接手这些队列。",
}

PATTERNS: dict[str, dict[str, str]] = {"zh": {
    # a run's label, and the titles chapters compute
    "{name} (seed {seed})": "{name}（随机种子 {seed}）",
    "RENDEZVOUS, {q} queues, {c} consumers (max - min = {d})": "RENDEZVOUS，{q} 个队列，{c} 个消费者（最多减最少 = {d}）",
    "A 4th consumer has just joined a group sharing these {q} queues with AVG; one old member has not heard yet and "
    "still computes for 3 members. How many queues end up owned twice or by nobody?":
        "一个用 AVG 共享这 {q} 个队列的组刚加入了第 4 个消费者；有一个老成员还没收到通知，仍按 3 个成员计算。"
        "最后有几个队列被重复持有或无人持有？",
    # details of rebalance steps (rmqlib.client.rebalance), with the numbers of the run
    "first pull from offset {offset}, {delay} ms later": "{delay} 毫秒后从位点 {offset} 开始第一次拉取",
    "first pop {delay} ms later": "{delay} 毫秒后第一次 Pop",
    "offset {offset} sent to the broker": "位点 {offset} 已发送给 Broker",
    "a lock was refused, so another round is asked for in {delay} ms": "加锁被拒，{delay} 毫秒后请求再来一轮",
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
