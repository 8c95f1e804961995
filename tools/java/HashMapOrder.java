// Records the order in which java.util.HashMap iterates string keys, for tests/test_protocol.py.
// Usage: javac HashMapOrder.java && java HashMapOrder < cases.txt > order.txt
// Each input line holds one case's keys, tab-separated, in the order they are put. Each output line holds two
// tab-separated lists (keys joined by a space): the key set of `new HashMap<>(m)`, where m is a LinkedHashMap of
// the keys in that order (how SimpleConsumerImpl#receive0 copies its subscriptions), then the key set of a
// `new HashMap<>()` the keys were put into one by one.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;

public class HashMapOrder {
    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            Map<String, Integer> ordered = new LinkedHashMap<>();
            Map<String, Integer> put = new HashMap<>();
            for (String key : line.split("\t", -1)) {
                ordered.put(key, 0);
                put.put(key, 0);
            }
            System.out.println(String.join(" ", new HashMap<>(ordered).keySet()) + "\t"
                + String.join(" ", put.keySet()));
        }
    }
}
