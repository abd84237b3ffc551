#!/usr/bin/env python3
"""A misbehaving provider for the provider-protocol tests: it answers hello, then does what its mode says."""
import json
import os
import sys
import time

mode = sys.argv[1]
ROOT = {"id": "NSFileProviderRootContainerItemIdentifier", "parent": "NSFileProviderRootContainerItemIdentifier", "filename": "",
        "type": "public.folder", "capabilities": 127, "flags": 6, "version": {"content": "", "metadata": ""}}


def send(frame):
    sys.stdout.write(json.dumps(frame) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    frame = json.loads(line)
    method, request_id = frame.get("method"), frame.get("id")
    if method == "hello":
        send({"id": request_id, "result": {"protocol": 1, "name": "scripted"}})
        if mode == "deaf":
            time.sleep(3600)  # reads nothing more: a large request fills the pipe
    elif mode == "crash-once":
        marker = sys.argv[2]
        if not os.path.exists(marker):
            open(marker, "w").close()
            os._exit(3)
        send({"id": request_id, "result": {"item": ROOT}})
    elif mode == "escape":
        item = dict(ROOT, id="x", filename="x", type="public.data", size=4)
        send({"id": request_id, "result": {"path": sys.argv[2], "item": item}})
    elif mode == "bad-name":
        send({"id": request_id, "result": {"item": dict(ROOT, id="x", filename="../evil")}})
    elif mode == "long-version":
        send({"id": request_id, "result": {"item": dict(ROOT, version={"content": "A" * 400, "metadata": ""})}})
    elif mode == "garbage":
        sys.stdout.write("this is not json\n")
        sys.stdout.flush()
    elif mode == "huge":
        sys.stdout.write("[" + "1," * (5 << 20) + "1]\n")
        sys.stdout.flush()
    elif mode == "hang":
        time.sleep(3600)
    elif mode == "cancel" and method == "fetchContents":
        send({"method": "progress", "params": {"id": request_id, "completed": 1, "total": 10}})
        for other in sys.stdin:
            notice = json.loads(other)
            if notice.get("method") == "cancel" and notice["params"]["id"] == request_id:
                send({"id": request_id, "error": {"domain": "NSCocoaErrorDomain", "code": 3072, "message": "cancelled"}})
                break
    else:
        send({"id": request_id, "error": {"domain": "NSFileProviderErrorDomain", "code": -1005, "message": "nothing here"}})
