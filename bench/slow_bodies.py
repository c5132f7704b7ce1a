"""The memory a grk server holds for slow request bodies, and what it gives back.

Each of CLIENTS connections sends a request head declaring a BODY-byte JSON body, then all but
the last 100 bytes of it at once, then one byte a second; the server answers each 408 at its
body timeout. The server's resident memory (VmRSS) is sampled every half second; the peak is
printed, and the resident memory three seconds after every connection has closed. Run it
several times against one server to see whether what a burst took comes back.

    grk --index-dir /tmp/empty serve --port 18555 &
    python3 bench/slow_bodies.py "$(pgrep -f 'serve --port 18555')" 18555 300 [BODY] [ROUNDS]
"""
import re
import socket
import sys
import threading
import time


def resident_mib(pid: int) -> int:
    status = open(f"/proc/{pid}/status").read()
    return int(re.search(r"VmRSS:\s+(\d+)", status).group(1)) // 1024


def client(port: int, body: int, opened: list) -> None:
    try:
        s = socket.create_connection(("127.0.0.1", port))
        opened.append(s)
        s.sendall(
            f"POST /search HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {body}\r\n\r\n".encode()
        )
        s.sendall(b" " * (body - 100))
        for _ in range(100):
            time.sleep(1)
            s.sendall(b" ")
    except OSError:
        pass  # the server closed the connection: the body timed out


def burst(pid: int, port: int, clients: int, body: int) -> None:
    before = resident_mib(pid)
    opened: list = []
    threads = [
        threading.Thread(target=client, args=(port, body, opened)) for _ in range(clients)
    ]
    for t in threads:
        t.start()
    peak = before
    while any(t.is_alive() for t in threads):
        peak = max(peak, resident_mib(pid))
        time.sleep(0.5)
    for s in opened:
        s.close()
    time.sleep(3)
    print(
        f"{clients} clients, {body} bytes: resident before {before} MiB, "
        f"peak {peak} MiB, after {resident_mib(pid)} MiB"
    )


def main() -> None:
    pid, port, clients = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    body = int(sys.argv[4]) if len(sys.argv) > 4 else 1024 * 1024
    rounds = int(sys.argv[5]) if len(sys.argv) > 5 else 3
    for _ in range(rounds):
        burst(pid, port, clients, body)


if __name__ == "__main__":
    main()
