#!/usr/bin/env python3
"""An HTTP/1.1 server for the plain client's tests: each path frames its reply its own way, and each
reply names the connection it came on ("connection N"), so a test sees which requests shared one."""
import http.server
import itertools
import sys
import threading
import time

port = int(sys.argv[1])
counter = itertools.count(1)
lock = threading.Lock()
# A body larger than the client receives straight into its file (8 MiB), and its SHA-256 known.
large = (bytes(range(251)) * (9 * 1024 * 1024 // 251 + 1))[: 9 * 1024 * 1024]


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def setup(self):
        super().setup()
        with lock:
            self.connection_number = next(counter)

    def raw(self, data):
        self.wfile.write(data)
        self.wfile.flush()

    def do_OPTIONS(self):
        self.raw(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")

    def do_PUT(self):
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        reply = b"connection %d got %d bytes" % (self.connection_number, len(body))
        self.raw(b"HTTP/1.1 201 Created\r\nContent-Length: %d\r\n\r\n%s" % (len(reply), reply))

    def do_GET(self):
        name = "connection %d" % self.connection_number
        data = name.encode()
        path = self.path
        if path == "/keep":
            self.raw(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(data), data))
        elif path == "/drop":
            # Kept alive by its framing, then closed at once: a pooled connection the server dropped.
            self.raw(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(data), data))
            self.close_connection = True
        elif path == "/close":
            self.raw(b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s" % (len(data), data))
            self.close_connection = True
        elif path == "/chunked":
            self.raw(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                     b"5;ext=1\r\nhello\r\n1\r\n \r\n" + b"%x\r\n%s\r\n" % (len(data), data) + b"0\r\nX-Trailer: yes\r\n\r\n")
        elif path == "/until-close":
            self.raw(b"HTTP/1.1 200 OK\r\n\r\n" + data + b" until close")
            self.close_connection = True
        elif path == "/continue":
            self.raw(b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(data), data))
        elif path == "/short":
            self.raw(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n" + data)
            self.close_connection = True
        elif path == "/extra":
            self.raw(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s and more" % (len(data), data))
        elif path == "/large":
            self.raw(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(large) + large)
        elif path == "/large-short":
            self.raw(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(large) + large[: 5 * 1024 * 1024])
            self.close_connection = True
        elif path == "/stall":
            self.raw(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nstart")
            time.sleep(120)
            self.close_connection = True
        elif path == "/missing":
            text = b"<html><body><p>no such file</p></body></html>"
            self.raw(b"HTTP/1.1 404 Not Found\r\nContent-Length: %d\r\n\r\n%s" % (len(text), text))
        else:
            self.raw(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")

    def log_message(self, *args):
        pass


server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
server.daemon_threads = True
server.serve_forever()
