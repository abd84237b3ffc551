#!/usr/bin/env python3
"""A Folio file provider in Python: serves a folder over the provider protocol (docs/provider-protocol.md).

Run by the daemon (or `folio provider validate folder_provider.py -- FOLDER`) with the folder as its
argument. It speaks newline-delimited JSON on stdin/stdout and logs to stderr.

Identifiers are paths relative to the folder (the root is Apple's root identifier), so a rename gives
the item a new identifier, which the provider returns; providers with stable ids (a database, a
server's file ids) return the same one. Anchors cover the changes made through this process: a new
process expires the old anchors, and the system enumerates again.
"""
import base64
import hashlib
import json
import os
import shutil
import sys
import time
import uuid

# Seconds to wait after each MiB fetched (default none): to watch a download's progress, in a
# demonstration or the browser page's tests.
CHUNK_DELAY = float(os.environ.get("FOLDER_PROVIDER_CHUNK_DELAY", "0"))

ROOT_ID = "NSFileProviderRootContainerItemIdentifier"
WORKING_SET = "NSFileProviderWorkingSetContainerItemIdentifier"
PAGE_SIZE = 50
FOLDER, DATA = "public.folder", "public.data"

# Apple's NSFileProviderErrorDomain codes, and two of Cocoa's.
NOT_FOUND, COLLISION, EXPIRED, NOT_EMPTY, VERSION_GONE, MISMATCH = -1005, -1001, -1002, -1007, -2009, -2015
PROVIDER, COCOA = "NSFileProviderErrorDomain", "NSCocoaErrorDomain"
INVALID_NAME, CANCELLED = 514, 3072


class ProviderError(Exception):
    def __init__(self, code, message, domain=PROVIDER, colliding=None):
        super().__init__(message)
        self.code, self.message, self.domain, self.colliding = code, message, domain, colliding


class FolderProvider:
    def __init__(self, root):
        self.root = os.path.realpath(root)
        self.epoch = uuid.uuid4().hex
        self.generation = 0
        self.changes = {}  # identifier -> (generation, deleted)
        self.temporary = None

    # Paths and items

    def path(self, identifier):
        if identifier == ROOT_ID:
            return self.root
        path = os.path.normpath(os.path.join(self.root, identifier))
        if not path.startswith(self.root + os.sep) or not os.path.lexists(path):
            raise ProviderError(NOT_FOUND, "no item %s" % identifier)
        return path

    def identifier(self, path):
        return ROOT_ID if path == self.root else os.path.relpath(path, self.root)

    def item(self, path):
        status = os.lstat(path)
        folder = os.path.isdir(path) and not os.path.islink(path)
        content = b""
        if not folder:
            content = self.digest(path)
        identifier = self.identifier(path)
        parent = ROOT_ID if identifier == ROOT_ID else self.identifier(os.path.dirname(path))
        metadata = hashlib.sha256(("%s\0%d\0%d" % (os.path.basename(path), status.st_mtime_ns, status.st_mode)).encode()).digest()
        item = {
            "id": identifier, "parent": parent, "filename": "" if identifier == ROOT_ID else os.path.basename(path),
            "type": FOLDER if folder else DATA, "capabilities": 127, "flags": 6,
            "version": {"content": b64(content), "metadata": b64(metadata)}, "modified": status.st_mtime,
        }
        if not folder:
            item["size"] = status.st_size
        return item

    def digest(self, path):
        hasher = hashlib.sha256()
        with open(path, "rb") as source:
            for chunk in iter(lambda: source.read(1 << 20), b""):
                hasher.update(chunk)
        return hasher.digest()

    def record(self, identifier, deleted=False):
        self.generation += 1
        self.changes[identifier] = (self.generation, deleted)

    def record_tree(self, path, deleted):
        self.record(self.identifier(path), deleted)
        if os.path.isdir(path) and not os.path.islink(path):
            for folder, names, files in os.walk(path):
                for name in names + files:
                    self.record(self.identifier(os.path.join(folder, name)), deleted)

    def anchor(self, generation=None):
        return b64(("py1:%s:%d" % (self.epoch, self.generation if generation is None else generation)).encode())

    @staticmethod
    def check_name(name):
        encoded = name.encode("utf-8", "surrogatepass")
        if name in ("", ".", "..") or "/" in name or "\0" in name or len(encoded) > 255:
            raise ProviderError(INVALID_NAME, "%r is not a valid name" % name, domain=COCOA)

    def folder(self, identifier):
        path = self.path(identifier)
        if not os.path.isdir(path):
            raise ProviderError(NOT_FOUND, "%s is not a folder" % identifier)
        return path

    def collision(self, path):
        raise ProviderError(COLLISION, "%s exists" % os.path.basename(path), colliding=self.identifier(path))

    def stage(self, folder, contents):
        staged = os.path.join(folder, ".folio-tmp-" + uuid.uuid4().hex)
        if contents:
            shutil.copyfile(contents, staged)
        else:
            open(staged, "wb").close()
        return staged

    # Calls

    def hello(self, params):
        if params.get("protocol") != 1:
            raise ProviderError(1, "this provider speaks protocol 1", domain="folio.provider-protocol")
        self.temporary = params["temporaryDirectory"]
        return {"protocol": 1, "name": "folder_provider.py"}

    def call_item(self, params):
        return {"item": self.item(self.path(params["identifier"]))}

    def call_enumerateItems(self, params):
        container = params["container"]
        if container == WORKING_SET:
            entries = []
            for folder, names, files in os.walk(self.root):
                names[:] = [n for n in names if not n.startswith(".folio-tmp-")]
                entries += [os.path.join(folder, n) for n in names + files if not n.startswith(".folio-tmp-")]
            keyed = sorted((self.identifier(p).encode("utf-8", "surrogateescape"), p) for p in entries)
        else:
            folder = self.folder(container)
            keyed = sorted((n.encode("utf-8", "surrogateescape"), os.path.join(folder, n))
                           for n in os.listdir(folder) if not n.startswith(".folio-tmp-"))
        page = base64.b64decode(params.get("page") or "")
        if len(page) > 500:
            raise ProviderError(EXPIRED, "the page is too long")
        after = page[len(b"after:"):] if page.startswith(b"after:") else None
        if after is None and page not in (b"\x00", b"\x01", b""):
            raise ProviderError(EXPIRED, "not a page of this provider")
        remaining = [(k, p) for k, p in keyed if after is None or k > after]
        taken = remaining[:PAGE_SIZE]
        following = b64(b"after:" + taken[-1][0]) if len(remaining) > PAGE_SIZE else None
        return {"items": [self.item(p) for _, p in taken], "nextPage": following}

    def call_currentSyncAnchor(self, params):
        return {"anchor": self.anchor()}

    def call_enumerateChanges(self, params):
        text = base64.b64decode(params["anchor"]).decode("utf-8", "replace").split(":")
        if len(text) != 3 or text[0] != "py1" or text[1] != self.epoch or not text[2].isdigit() or int(text[2]) > self.generation:
            raise ProviderError(EXPIRED, "the anchor is expired or not this provider's")
        start = int(text[2])
        updated, deleted = [], []
        for identifier, (generation, gone) in sorted(self.changes.items(), key=lambda kv: kv[1][0]):
            if generation <= start:
                continue
            if gone:
                deleted.append(identifier)
            else:
                try:
                    updated.append(self.item(self.path(identifier)))
                except ProviderError:
                    deleted.append(identifier)
        return {"updated": updated, "deleted": deleted, "anchor": self.anchor(), "moreComing": False}

    def call_fetchContents(self, params, request_id):
        path = self.path(params["identifier"])
        if os.path.isdir(path):
            raise ProviderError(NOT_FOUND, "a folder has no content")
        item = self.item(path)
        version = params.get("version")
        if version and version["content"] != item["version"]["content"]:
            raise ProviderError(VERSION_GONE, "that version is gone")
        destination = os.path.join(self.temporary, "fetch-" + uuid.uuid4().hex)
        total, done = os.path.getsize(path), 0
        with open(path, "rb") as source, open(destination, "wb") as target:
            for chunk in iter(lambda: source.read(1 << 20), b""):
                target.write(chunk)
                done += len(chunk)
                send({"method": "progress", "params": {"id": request_id, "completed": done, "total": total}})
                if CHUNK_DELAY:
                    time.sleep(CHUNK_DELAY)
        return {"path": destination, "item": item}

    def call_createItem(self, params):
        template = params["template"]
        self.check_name(template["filename"])
        folder = self.folder(template["parent"])
        path = os.path.join(folder, template["filename"])
        if os.path.lexists(path):
            self.collision(path)
        if template["type"] == FOLDER:
            os.mkdir(path)
        else:
            staged = self.stage(folder, params.get("contents"))
            try:
                os.link(staged, path)  # fails if the name was taken meanwhile
            except FileExistsError:
                self.collision(path)
            finally:
                os.unlink(staged)
        self.record(self.identifier(path))
        return {"item": self.item(path), "pendingFields": 0, "shouldFetchContent": False}

    def call_modifyItem(self, params):
        item, fields, base = params["item"], params.get("changedFields", 0), params["baseVersion"]
        path = self.path(item["id"])
        if fields & 1 and not os.path.isdir(path):
            current = self.item(path)["version"]["content"]
            if base["content"] and base["content"] != current:
                raise ProviderError(MISMATCH, "%s changed since the base version" % item["filename"])
            staged = self.stage(os.path.dirname(path), params.get("contents"))
            os.replace(staged, path)
            self.record(self.identifier(path))
        if fields & (2 | 4):
            if fields & 2:
                self.check_name(item["filename"])
            name = item["filename"] if fields & 2 else os.path.basename(path)
            parent = self.folder(item["parent"]) if fields & 4 else os.path.dirname(path)
            destination = os.path.join(parent, name)
            if destination != path:
                if (destination + os.sep).startswith(path + os.sep):
                    raise ProviderError(INVALID_NAME, "a folder cannot move into itself", domain=COCOA)
                if os.path.lexists(destination):
                    self.collision(destination)
                self.record_tree(path, True)
                os.rename(path, destination)
                self.record_tree(destination, False)
                path = destination
        return {"item": self.item(path), "pendingFields": 0, "shouldFetchContent": False}

    def call_deleteItem(self, params):
        try:
            path = self.path(params["identifier"])
        except ProviderError:
            return {}
        if path == self.root:
            raise ProviderError(-1006, "the root cannot be deleted")
        base = params["baseVersion"]["content"]
        if not os.path.isdir(path) and base and base != self.item(path)["version"]["content"]:
            raise ProviderError(MISMATCH, "changed since the base version")
        if os.path.isdir(path) and not os.path.islink(path):
            if os.listdir(path) and not params.get("options", 0) & 1:
                raise ProviderError(NOT_EMPTY, "the folder is not empty")
            self.record_tree(path, True)
            shutil.rmtree(path)
        else:
            self.record(self.identifier(path), True)
            os.unlink(path)
        return {}


def b64(data):
    return base64.b64encode(data).decode("ascii")


def send(frame):
    sys.stdout.write(json.dumps(frame, ensure_ascii=False) + "\n")
    sys.stdout.flush()


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: folder_provider.py FOLDER")
    provider = FolderProvider(sys.argv[1])
    for line in sys.stdin:
        try:
            frame = json.loads(line)
        except ValueError:
            send({"id": None, "error": {"domain": "folio.provider-protocol", "code": 1, "message": "not JSON"}})
            continue
        if "id" not in frame:
            continue  # notifications: `cancel` (this provider runs one request at a time)
        request_id, method, params = frame["id"], frame.get("method"), frame.get("params", {})
        try:
            if method == "hello":
                result = provider.hello(params)
            elif method == "fetchContents":
                result = provider.call_fetchContents(params, request_id)
            else:
                handler = getattr(provider, "call_" + str(method), None)
                if handler is None:
                    raise ProviderError(1, "unknown method %s" % method, domain="folio.provider-protocol")
                result = handler(params)
            send({"id": request_id, "result": result})
        except ProviderError as error:
            reply = {"domain": error.domain, "code": error.code, "message": error.message}
            if error.colliding:
                reply["collidingItem"] = error.colliding
            send({"id": request_id, "error": reply})
        except OSError as error:
            print("error in %s: %s" % (method, error), file=sys.stderr)
            send({"id": request_id, "error": {"domain": "NSPOSIXErrorDomain", "code": error.errno or 0, "message": str(error)}})


if __name__ == "__main__":
    main()
