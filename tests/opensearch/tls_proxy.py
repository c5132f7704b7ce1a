"""A TLS front for the test cluster that requires HTTP basic authentication, as a reverse proxy
(nginx, a cloud load balancer) in front of OpenSearch would: it terminates TLS with the given
certificate, answers 401 to a request without the right credentials, and forwards every other
request unchanged to the upstream node, returning its answer.

    python3 tls_proxy.py CERT KEY UPSTREAM_PORT USER PASSWORD

Prints the port it listens on (127.0.0.1), then serves until its standard input closes.
"""

import base64
import http.client
import http.server
import ssl
import sys
import threading


def main():
    cert, key, upstream, user, password = sys.argv[1:6]
    expected = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()

    class Proxy(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def forward(self):
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else None
            if self.headers.get("Authorization") != expected:
                answer = b'{"error":"unauthorized at the front"}'
                self.send_response(401)
                self.send_header("WWW-Authenticate", 'Basic realm="test"')
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)
                return
            connection = http.client.HTTPConnection("127.0.0.1", int(upstream), timeout=60)
            headers = {"Content-Type": self.headers.get("Content-Type", "application/json")}
            connection.request(self.command, self.path, body=body, headers=headers)
            response = connection.getresponse()
            data = response.read()
            self.send_response(response.status)
            self.send_header("Content-Type", response.getheader("Content-Type", "application/json"))
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            connection.close()

        do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = forward

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Proxy)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print(server.server_address[1], flush=True)
    sys.stdin.read()


if __name__ == "__main__":
    main()
