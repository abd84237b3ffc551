#!/usr/bin/env python3
"""A hostile WebDAV server for the provider tests: PROPFIND answers with whatever its mode says."""
import http.server
import sys

mode, port = sys.argv[1], int(sys.argv[2])
ENTRY = ('<D:response><D:href>%s</D:href><D:propstat><D:prop><D:resourcetype/><D:getetag>"e1"</D:getetag>'
         '<D:getcontentlength>3</D:getcontentlength></D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response>')
ROOT = ('<D:response><D:href>/</D:href><D:propstat><D:prop><D:resourcetype><D:collection/></D:resourcetype></D:prop>'
        '<D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response>')


def body():
    if mode == "malformed":
        return '<?xml version="1.0"?><D:multistatus xmlns:D="DAV:">' + ROOT + '<D:response><D:href>/a.txt'
    if mode == "doctype":
        return ('<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;">]>'
                '<D:multistatus xmlns:D="DAV:">' + ROOT + (ENTRY % "/&lol2;.txt") + '</D:multistatus>')
    if mode == "huge":
        return '<?xml version="1.0"?><D:multistatus xmlns:D="DAV:">' + ROOT + (ENTRY % "/x.txt") * 400000 + '</D:multistatus>'
    if mode == "traversal":
        names = ["/ok.txt", "/../escape.txt", "/a/..%2F..%2Fescape.txt", "/%2e%2e/escape.txt", "http://elsewhere.example/other.txt",
                 "/nul%00byte.txt", "/bad%ZZ.txt", "/slash%2Finside.txt", "/caf%C3%A9.txt"]
        return '<?xml version="1.0"?><D:multistatus xmlns:D="DAV:">' + ROOT + "".join(ENTRY % n for n in names) + '</D:multistatus>'
    return ""


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_PROPFIND(self):
        length = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(length)
        data = body().encode()
        self.send_response(207)
        self.send_header("Content-Type", "application/xml; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_OPTIONS(self):
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()
