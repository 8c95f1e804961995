// Times RocketMQ's own AllocateMessageQueueConsistentHash#allocate, for chapter 03's claim that one call's work grows
// like consumers^2 x virtual nodes. Built and run by time_consistent_hash.py against a RocketMQ checkout.
// Usage: java TimeConsistentHash QUEUES CONSUMERS VIRTUAL_NODES CALLS
// Prints one line: the milliseconds of each call, space-separated (one untimed call first, to load the classes).
import java.util.ArrayList;
import java.util.List;
import org.apache.rocketmq.client.consumer.rebalance.AllocateMessageQueueConsistentHash;
import org.apache.rocketmq.common.message.MessageQueue;

public class TimeConsistentHash {
    public static void main(String[] args) {
        int queues = Integer.parseInt(args[0]);
        int consumers = Integer.parseInt(args[1]);
        int virtualNodes = Integer.parseInt(args[2]);
        int calls = Integer.parseInt(args[3]);
        List<MessageQueue> mqAll = new ArrayList<>();
        for (int i = 0; i < queues; i++) {
            mqAll.add(new MessageQueue("TopicTest", "broker-a", i));  // rmqlib.allocation.make_queues
        }
        List<String> cidAll = new ArrayList<>();
        for (int i = 1; i <= consumers; i++) {
            cidAll.add("10.0.0." + i + "@" + (1000 + i));  // rmqlib.allocation.make_cids
        }
        AllocateMessageQueueConsistentHash strategy = new AllocateMessageQueueConsistentHash(virtualNodes);
        strategy.allocate("GID", cidAll.get(0), mqAll, cidAll);
        StringBuilder out = new StringBuilder();
        for (int k = 0; k < calls; k++) {
            long start = System.nanoTime();
            strategy.allocate("GID", cidAll.get(k % consumers), mqAll, cidAll);
            out.append(k == 0 ? "" : " ").append(String.format("%.1f", (System.nanoTime() - start) / 1e6));
        }
        System.out.println(out);
    }
}
