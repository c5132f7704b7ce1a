#!/usr/bin/env bash
# The OpenSearch test cluster's classpath: resolves tests/opensearch/pom.xml from Maven Central
# into target/opensearch/lib (the k-NN plugin zip unpacked into target/opensearch/knn) and
# compiles the node launcher into target/opensearch/classes. Needs Maven and a JDK of 21 or later
# (OpenSearch 3.x): JAVA_HOME when set, else the Temurin 25 JDK at its Debian path. The Rust tests
# start their nodes from there (tests/it/opensearch).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
export JAVA_HOME=${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}
out=target/opensearch
mkdir -p "$out"
if [ ! -f "$out/lib.stamp" ] || [ tests/opensearch/pom.xml -nt "$out/lib.stamp" ]; then
    rm -rf "$out/lib" "$out/knn"
    if ! mvn -q -B -f tests/opensearch/pom.xml dependency:copy-dependencies \
        -DoutputDirectory="$(pwd)/$out/lib" >"$out/mvn.log" 2>&1; then
        cat "$out/mvn.log" >&2
        exit 1
    fi
    mkdir -p "$out/knn"
    (cd "$out/knn" && unzip -qo ../lib/opensearch-knn-*.zip '*.jar')
    rm "$out"/lib/opensearch-knn-*.zip
    touch "$out/lib.stamp"
fi
rm -rf "$out/classes"
"$JAVA_HOME/bin/javac" -d "$out/classes" -cp "$out/lib/*:$out/knn/*" \
    tests/opensearch/src/main/java/groundkit/cluster/Node.java
echo "$out"
