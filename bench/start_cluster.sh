# Sourced by the OpenSearch benchmark scripts. Sets `work` (a temporary directory) and `pids`
# (processes to kill), with a trap that kills them and removes `work` at exit, and sources
# bench/wait_for.sh. Then `start_cluster` starts the three-node cluster of the test set-up's
# artifacts (1 GiB of heap per node, data under `work`), adds the nodes to `pids`, waits for it
# to be green and sets `url`. Each node reads its standard input from a `sleep`.
work=$(mktemp -d)
pids=()
cleanup() {
    kill "${pids[@]}" 2>/dev/null || true
    # The `sleep`s feeding the nodes' standard input, so nothing outlives the script.
    pkill -P $$ -x sleep 2>/dev/null || true
    # Every child has exited before its files are removed: a node still shutting down would
    # write its directory again.
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
source bench/wait_for.sh

start_cluster() {
    local base=$((40000 + RANDOM % 10000)) i
    local http=("$base" $((base + 1)) $((base + 2)))
    local transport=($((base + 10)) $((base + 11)) $((base + 12)))
    local cp="target/opensearch/classes:target/opensearch/lib/*:target/opensearch/knn/*"
    for i in 0 1 2; do
        sleep infinity | "$JAVA_HOME/bin/java" -Xms1g -Xmx1g --enable-native-access=ALL-UNNAMED \
            -cp "$cp" groundkit.cluster.Node "node$i" "$work/node$i" "${http[$i]}" "${transport[$i]}" \
            "$(IFS=,; echo "${transport[*]}")" node0,node1,node2 >"$work/node$i.log" 2>&1 &
        pids+=($!)
    done
    wait_for "${http[0]}"
    curl -sf "127.0.0.1:${http[0]}/_cluster/health?wait_for_nodes=3&wait_for_status=green&timeout=120s" >/dev/null
    url="http://127.0.0.1:${http[0]}"
}
