package groundkit.cluster;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.opensearch.Version;
import org.opensearch.common.settings.Settings;
import org.opensearch.node.InternalSettingsPreparer;
import org.opensearch.plugins.Plugin;
import org.opensearch.plugins.PluginInfo;

/**
 * One OpenSearch node of the test cluster, with its plugins loaded from the classpath.
 *
 * <pre>java groundkit.cluster.Node NAME HOME HTTP_PORT TRANSPORT_PORT SEED_PORTS CLUSTER_MANAGERS</pre>
 *
 * SEED_PORTS is a comma-separated list of the transport ports of every node (all on 127.0.0.1),
 * CLUSTER_MANAGERS the comma-separated names of the nodes that elect the first cluster manager.
 * Prints "started NAME" once the node serves HTTP, and stops the JVM when its standard input
 * closes, so a node never outlives the process that started it.
 */
public final class Node {
    private static final List<Class<? extends Plugin>> PLUGINS = List.of(
        org.opensearch.transport.Netty4ModulePlugin.class,
        org.opensearch.analysis.common.CommonAnalysisModulePlugin.class,
        org.opensearch.knn.plugin.KNNPlugin.class);

    public static void main(String[] args) throws Exception {
        if (args.length != 6) {
            System.err.println("usage: Node NAME HOME HTTP_PORT TRANSPORT_PORT SEED_PORTS CLUSTER_MANAGERS");
            System.exit(2);
        }
        String name = args[0];
        Path home = Path.of(args[1]);
        Files.createDirectories(home);
        List<String> seeds = new ArrayList<>();
        for (String port : args[4].split(",")) {
            seeds.add("127.0.0.1:" + port);
        }
        Settings settings = Settings.builder()
            .put("cluster.name", "groundkit-test")
            .put("node.name", name)
            .put("path.home", home.toString())
            .put("path.data", home.resolve("data").toString())
            .put("network.host", "127.0.0.1")
            .put("http.port", args[2])
            .put("transport.port", args[3])
            .putList("discovery.seed_hosts", seeds)
            .putList("cluster.initial_cluster_manager_nodes", List.of(args[5].split(",")))
            // A test machine's disk may be fuller than production watermarks allow.
            .put("cluster.routing.allocation.disk.threshold_enabled", false)
            .build();
        List<PluginInfo> plugins = new ArrayList<>();
        for (Class<? extends Plugin> plugin : PLUGINS) {
            plugins.add(new PluginInfo(plugin.getName(), "classpath plugin", "NA", Version.CURRENT,
                "21", plugin.getName(), null, List.of(), false));
        }
        var environment = InternalSettingsPreparer.prepareEnvironment(settings, Map.of(), null, () -> name);
        org.opensearch.node.Node node = new org.opensearch.node.Node(environment, plugins, true) {};
        node.start();
        System.out.println("started " + name);
        System.out.flush();
        while (System.in.read() != -1) {
            // Anything written to the node is ignored; end of input stops it.
        }
        Runtime.getRuntime().halt(0);
    }
}
