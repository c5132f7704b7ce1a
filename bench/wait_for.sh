# Sourced by the benchmark scripts: `wait_for PORT` returns once something accepts connections
# on 127.0.0.1:PORT, or fails after a minute.
wait_for() {
    for _ in $(seq 600); do
        (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
        sleep 0.1
    done
    echo "nothing listens on $1" >&2
    return 1
}
