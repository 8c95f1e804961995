import java.io.*;
import java.util.*;
import org.apache.kafka.clients.consumer.*;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Subscription;
import org.apache.kafka.clients.consumer.internals.AbstractStickyAssignor;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.coordinator.group.api.assignor.*;
import org.apache.kafka.coordinator.group.modern.MemberAssignmentImpl;

public class Oracle {
  // StickyAssignor's memberData reads owned partitions and generation from user data; this harness passes them in
  // the subscription's fields instead (the eager path's user data carries exactly these two).
  static class OracleSticky extends AbstractStickyAssignor {
    public String name() { return "sticky"; }
    protected MemberData memberData(Subscription s) { return new MemberData(s.ownedPartitions(), s.generationId(), s.rackId()); }
  }
  static List<TopicPartition> parseTps(String s) {
    List<TopicPartition> out = new ArrayList<>();
    if (s.equals("-")) return out;
    for (String w : s.split(",")) { int i = w.lastIndexOf(':'); out.add(new TopicPartition(w.substring(0, i), Integer.parseInt(w.substring(i + 1)))); }
    return out;
  }
  public static void main(String[] args) throws Exception {
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, "UTF-8"));
    PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), true, "UTF-8");
    String line; String assignor = null;
    List<String[]> topics = new ArrayList<>(); List<String[]> members = new ArrayList<>(); Map<String, String> prev = new HashMap<>();
    while ((line = in.readLine()) != null) {
      String[] f = line.split(" ");
      switch (f[0]) {
        case "CASE": assignor = f[1]; topics.clear(); members.clear(); prev.clear(); break;
        case "TOPIC": topics.add(f); break;
        case "MEMBER": members.add(f); break;
        case "PREV": prev.put(f[1], f[2]); break;
        case "END": out.println(run(assignor, topics, members, prev)); out.println("DONE"); break;
      }
    }
  }
  static String run(String name, List<String[]> topics, List<String[]> members, Map<String, String> prev) {
    StringBuilder sb = new StringBuilder();
    try {
      if (name.equals("uniform") || name.equals("server-range")) return server(name, topics, members, prev);
      Map<String, Integer> ppt = new HashMap<>();
      for (String[] t : topics) ppt.put(t[1], Integer.parseInt(t[2]));
      Map<String, Subscription> subs = new HashMap<>();
      List<String> sortedIds = new ArrayList<>(); for (String[] m : members) sortedIds.add(m[1]); Collections.sort(sortedIds);
      Map<String, String[]> byId = new HashMap<>(); for (String[] m : members) byId.put(m[1], m);
      for (String id : sortedIds) {
        String[] m = byId.get(id);
        List<String> ts = m[4].equals("-") ? new ArrayList<>() : Arrays.asList(m[4].split(","));
        int gen = m[2].equals("-") ? -1 : Integer.parseInt(m[2]);
        Subscription s = new Subscription(ts, null, parseTps(m[5]), gen, Optional.empty());
        if (!m[3].equals("-")) s.setGroupInstanceId(Optional.of(m[3]));
        subs.put(id, s);
      }
      AbstractPartitionAssignorHolder h = new AbstractPartitionAssignorHolder(name);
      Map<String, List<TopicPartition>> got = h.assign(ppt, subs);
      List<String> keys = new ArrayList<>(got.keySet()); Collections.sort(keys);
      for (String k : keys) { sb.append(k).append("|"); StringJoiner j = new StringJoiner(","); for (TopicPartition tp : got.get(k)) j.add(tp.topic() + ":" + tp.partition()); sb.append(j).append("\n"); }
      return sb.toString().trim();
    } catch (Exception e) { return "ERROR " + e; }
  }
  static class AbstractPartitionAssignorHolder {
    final String name; AbstractPartitionAssignorHolder(String n) { name = n; }
    Map<String, List<TopicPartition>> assign(Map<String, Integer> ppt, Map<String, Subscription> subs) {
      switch (name) {
        case "range": return new RangeAssignor().assign(ppt, subs);
        case "roundrobin": return new RoundRobinAssignor().assign(ppt, subs);
        case "sticky": return new OracleSticky().assign(ppt, subs);
        case "cooperative-sticky": return new CooperativeStickyAssignor().assignPartitions(partitionInfos(ppt), subs);
      }
      throw new IllegalArgumentException(name);
    }
  }
  static Map<String, List<org.apache.kafka.common.PartitionInfo>> partitionInfos(Map<String, Integer> ppt) {
    Map<String, List<org.apache.kafka.common.PartitionInfo>> out = new HashMap<>();
    org.apache.kafka.common.Node[] none = new org.apache.kafka.common.Node[] {org.apache.kafka.common.Node.noNode()};
    for (Map.Entry<String, Integer> e : ppt.entrySet()) {
      List<org.apache.kafka.common.PartitionInfo> l = new ArrayList<>();
      for (int i = 0; i < e.getValue(); i++) l.add(new org.apache.kafka.common.PartitionInfo(e.getKey(), i, org.apache.kafka.common.Node.noNode(), none, none));
      out.put(e.getKey(), l);
    }
    return out;
  }
  // KIP-848: topic ids chosen so that their order (and HashSet order) is the topic names' order
  static String server(String name, List<String[]> topics, List<String[]> members, Map<String, String> prev) {
    List<String> names = new ArrayList<>(); Map<String, Integer> counts = new HashMap<>();
    for (String[] t : topics) { names.add(t[1]); counts.put(t[1], Integer.parseInt(t[2])); }
    Collections.sort(names);
    Map<String, Uuid> ids = new HashMap<>(); Map<Uuid, String> back = new HashMap<>();
    for (int i = 0; i < names.size(); i++) { Uuid u = new Uuid(0L, i + 1); ids.put(names.get(i), u); back.put(u, names.get(i)); }
    List<String> sortedIds = new ArrayList<>(); Map<String, String[]> byId = new HashMap<>();
    for (String[] m : members) { sortedIds.add(m[1]); byId.put(m[1], m); } Collections.sort(sortedIds);
    Map<String, MemberSubscription> subs = new HashMap<>(); Map<String, MemberAssignment> assignments = new HashMap<>();
    Map<Uuid, Map<Integer, String>> inverted = new HashMap<>();
    Set<Set<Uuid>> distinct = new HashSet<>();
    for (String id : sortedIds) {
      String[] m = byId.get(id);
      Set<Uuid> topicIds = new HashSet<>();
      if (!m[4].equals("-")) for (String t : m[4].split(",")) if (ids.containsKey(t)) topicIds.add(ids.get(t));
      distinct.add(topicIds);
      Optional<String> inst = m[3].equals("-") ? Optional.empty() : Optional.of(m[3]);
      subs.put(id, new MemberSubscription() {
        public Optional<String> rackId() { return Optional.empty(); }
        public Optional<String> instanceId() { return inst; }
        public Set<Uuid> subscribedTopicIds() { return topicIds; }
      });
      Map<Uuid, List<Integer>> lists = new TreeMap<>();
      for (TopicPartition tp : parseTps(prev.getOrDefault(id, "-"))) {
        if (!ids.containsKey(tp.topic())) continue;
        lists.computeIfAbsent(ids.get(tp.topic()), k -> new ArrayList<>()).add(tp.partition());
        inverted.computeIfAbsent(ids.get(tp.topic()), k -> new HashMap<>()).put(tp.partition(), id);
      }
      Map<Uuid, Set<Integer>> part = new HashMap<>();
      for (Map.Entry<Uuid, List<Integer>> e : lists.entrySet()) { Collections.sort(e.getValue()); part.put(e.getKey(), new HashSet<>(e.getValue())); }
      assignments.put(id, new MemberAssignmentImpl(Collections.unmodifiableMap(part)));
    }
    SubscriptionType type = distinct.size() <= 1 ? SubscriptionType.HOMOGENEOUS : SubscriptionType.HETEROGENEOUS;
    GroupSpec spec = new GroupSpec() {
      public Collection<String> memberIds() { return subs.keySet(); }
      public SubscriptionType subscriptionType() { return type; }
      public boolean isPartitionAssigned(Uuid t, int p) { Map<Integer, String> m = inverted.get(t); return m != null && m.containsKey(p); }
      public MemberSubscription memberSubscription(String id) { return subs.get(id); }
      public MemberAssignment memberAssignment(String id) { return assignments.get(id); }
    };
    SubscribedTopicDescriber describer = new SubscribedTopicDescriber() {
      public int numPartitions(Uuid t) { String n = back.get(t); return n == null ? -1 : counts.get(n); }
      public Set<String> racksForPartition(Uuid t, int p) { return Collections.emptySet(); }
    };
    try {
      ConsumerGroupPartitionAssignor a = name.equals("uniform") ? new org.apache.kafka.coordinator.group.assignor.UniformAssignor()
          : new org.apache.kafka.coordinator.group.assignor.RangeAssignor();
      GroupAssignment g = a.assign(spec, describer);
      StringBuilder sb = new StringBuilder();
      for (String id : sortedIds) {
        MemberAssignment ma = g.members().get(id);
        List<String> tps = new ArrayList<>();
        if (ma != null) for (Map.Entry<Uuid, Set<Integer>> e : ma.partitions().entrySet()) for (int p : e.getValue()) tps.add(back.get(e.getKey()) + ":" + p);
        Collections.sort(tps, (x, y) -> { int i = x.lastIndexOf(':'), j = y.lastIndexOf(':'); int c = x.substring(0, i).compareTo(y.substring(0, j)); return c != 0 ? c : Integer.compare(Integer.parseInt(x.substring(i + 1)), Integer.parseInt(y.substring(j + 1))); });
        sb.append(id).append("|").append(String.join(",", tps)).append("\n");
      }
      return sb.toString().trim();
    } catch (Exception e) { return "ERROR " + e; }
  }
}
