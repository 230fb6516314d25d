// A transcription of Apache Kafka's AdminUtils.assignReplicasToBrokers (rack-aware and
// rack-unaware), written from Kafka's algorithm for Railyard's benchmarks: the same data
// structures Kafka uses (a HashMap of partition -> ArrayList of broker ids, HashSets for
// the racks and brokers already holding a replica), so its speed is Kafka's.
//
// Reads one case per line on stdin, "brokers racks partitions rf startIndex startPartition",
// places it once and prints "nanos checksum" (the checksum lets the caller check that
// Railyard placed exactly the same replicas). Brokers have ids 1..brokers; with racks > 0
// broker i is in rack "r" + ((i - 1) % racks), as the Python side builds them.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

public final class AdminUtilsBench {

    static Map<Integer, List<Integer>> rackUnaware(int nPartitions, int replicationFactor,
            List<Integer> brokerList, int fixedStartIndex, int startPartitionId) {
        Map<Integer, List<Integer>> ret = new HashMap<>();
        int startIndex = fixedStartIndex;
        int currentPartitionId = Math.max(0, startPartitionId);
        int nextReplicaShift = fixedStartIndex;
        for (int i = 0; i < nPartitions; i++) {
            if (currentPartitionId > 0 && (currentPartitionId % brokerList.size() == 0)) {
                nextReplicaShift += 1;
            }
            int firstReplicaIndex = (currentPartitionId + startIndex) % brokerList.size();
            List<Integer> replicaBuffer = new ArrayList<>();
            replicaBuffer.add(brokerList.get(firstReplicaIndex));
            for (int j = 0; j < replicationFactor - 1; j++) {
                replicaBuffer.add(brokerList.get(
                        replicaIndex(firstReplicaIndex, nextReplicaShift, j, brokerList.size())));
            }
            ret.put(currentPartitionId, replicaBuffer);
            currentPartitionId += 1;
        }
        return ret;
    }

    static Map<Integer, List<Integer>> rackAware(int nPartitions, int replicationFactor,
            Map<Integer, String> brokerRackMap, int fixedStartIndex, int startPartitionId) {
        int numRacks = new HashSet<>(brokerRackMap.values()).size();
        List<Integer> arrangedBrokerList = rackAlternatedBrokerList(brokerRackMap);
        int numBrokers = arrangedBrokerList.size();
        Map<Integer, List<Integer>> ret = new HashMap<>();
        int startIndex = fixedStartIndex;
        int currentPartitionId = Math.max(0, startPartitionId);
        int nextReplicaShift = fixedStartIndex;
        for (int i = 0; i < nPartitions; i++) {
            if (currentPartitionId > 0 && (currentPartitionId % arrangedBrokerList.size() == 0)) {
                nextReplicaShift += 1;
            }
            int firstReplicaIndex = (currentPartitionId + startIndex) % arrangedBrokerList.size();
            int leader = arrangedBrokerList.get(firstReplicaIndex);
            List<Integer> replicaBuffer = new ArrayList<>();
            replicaBuffer.add(leader);
            Set<String> racksWithReplicas = new HashSet<>();
            racksWithReplicas.add(brokerRackMap.get(leader));
            Set<Integer> brokersWithReplicas = new HashSet<>();
            brokersWithReplicas.add(leader);
            int k = 0;
            for (int j = 0; j < replicationFactor - 1; j++) {
                boolean done = false;
                while (!done) {
                    Integer broker = arrangedBrokerList.get(replicaIndex(firstReplicaIndex,
                            nextReplicaShift * numRacks, k, arrangedBrokerList.size()));
                    String rack = brokerRackMap.get(broker);
                    if ((!racksWithReplicas.contains(rack) || racksWithReplicas.size() == numRacks)
                            && (!brokersWithReplicas.contains(broker)
                                || brokersWithReplicas.size() == numBrokers)) {
                        replicaBuffer.add(broker);
                        racksWithReplicas.add(rack);
                        brokersWithReplicas.add(broker);
                        done = true;
                    }
                    k += 1;
                }
            }
            ret.put(currentPartitionId, replicaBuffer);
            currentPartitionId += 1;
        }
        return ret;
    }

    static int replicaIndex(int firstReplicaIndex, int secondReplicaShift, int replicaIndex,
            int nBrokers) {
        long shift = 1 + (secondReplicaShift + replicaIndex) % (nBrokers - 1);
        return (int) ((firstReplicaIndex + shift) % nBrokers);
    }

    static List<Integer> rackAlternatedBrokerList(Map<Integer, String> brokerRackMap) {
        Map<String, List<Integer>> byRack = new TreeMap<>();
        brokerRackMap.forEach((b, r) -> byRack.computeIfAbsent(r, x -> new ArrayList<>()).add(b));
        Map<String, Iterator<Integer>> iterators = new HashMap<>();
        byRack.forEach((r, brokers) -> {
            brokers.sort(null);
            iterators.put(r, brokers.iterator());
        });
        String[] racks = iterators.keySet().toArray(new String[0]);
        Arrays.sort(racks);
        List<Integer> result = new ArrayList<>();
        int rackIndex = 0;
        while (result.size() < brokerRackMap.size()) {
            Iterator<Integer> rackIterator = iterators.get(racks[rackIndex]);
            if (rackIterator.hasNext()) {
                result.add(rackIterator.next());
            }
            rackIndex = (rackIndex + 1) % racks.length;
        }
        return result;
    }

    /** Sum of broker x (replica position + 1) x (partition id + 1): differs when any
     *  replica is on another broker or in another position (no overflow below 2^63). */
    static long checksum(Map<Integer, List<Integer>> assignment, int startPartition, int n) {
        long sum = 0;
        for (int p = startPartition; p < startPartition + n; p++) {
            int j = 0;
            for (int broker : assignment.get(p)) {
                sum += (long) broker * (j + 1) * (p + 1);
                j++;
            }
        }
        return sum;
    }

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        String line;
        while ((line = in.readLine()) != null) {
            String[] f = line.trim().split("\\s+");
            int brokers = Integer.parseInt(f[0]);
            int racks = Integer.parseInt(f[1]);
            int partitions = Integer.parseInt(f[2]);
            int rf = Integer.parseInt(f[3]);
            int start = Integer.parseInt(f[4]);
            int startPartition = Integer.parseInt(f[5]);
            List<Integer> ids = new ArrayList<>();
            Map<Integer, String> rackMap = new HashMap<>();
            for (int b = 1; b <= brokers; b++) {
                ids.add(b);
                rackMap.put(b, "r" + ((b - 1) % Math.max(racks, 1)));
            }
            long t0 = System.nanoTime();
            Map<Integer, List<Integer>> out = racks > 0
                    ? rackAware(partitions, rf, rackMap, start, startPartition)
                    : rackUnaware(partitions, rf, ids, start, startPartition);
            long nanos = System.nanoTime() - t0;
            System.out.println(nanos + " " + checksum(out, startPartition, partitions));
            System.out.flush();
        }
    }
}
