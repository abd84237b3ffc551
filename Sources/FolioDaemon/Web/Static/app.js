// Folio's document browser: a page over the daemon's API (docs/web.md). No framework, no build step.

const finderColours = { red: "#ff5f57", orange: "#ff9f0a", yellow: "#ffd60a", green: "#32d74b", blue: "#0a84ff", purple: "#bf5af2", gray: "#98989d", grey: "#98989d" };
const pageSize = 200;

const state = {
  view: "folder",      // folder, search, recents, favorites, tagged, trash
  path: null,          // the folder shown
  tag: null,
  items: [],
  total: 0,
  selected: new Set(),
  anchor: -1,
  sort: "name",
  desc: false,
  loading: false,
  places: null,
  generation: 0,
  picker: null,        // the picker request the page shows: { request, app, appName, params }
  downloads: new Map(), // drive downloads under way: path → { fraction, completed, total }
  drive: null,          // the drive page's last answer
  firstScreen: false,
  searchStarted: null,
};

const pickerVerbs = { open: "Open", import: "Import", export: "Export Here", move: "Move Here" };

const $ = (id) => document.getElementById(id);
// The end of the list: when it scrolls into view, the next page is fetched.
const sentinel = Object.assign(document.createElement("li"), { className: "more" });
sentinel.setAttribute("role", "presentation");

async function api(path, body) {
  const init = body === undefined ? {} : { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) };
  const response = await fetch("/api/" + path, init);
  let value = null;
  try { value = await response.json(); } catch { value = null; }
  if (!response.ok) throw new Error((value && value.error) || response.statusText);
  return value;
}

function say(text) { $("status").textContent = text; }

function element(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") node.className = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children) if (child !== null && child !== undefined) node.append(child);
  return node;
}

function baseName(path) { return path === "/" ? "/" : path.slice(path.lastIndexOf("/") + 1); }
function parentOf(path) { const i = path.lastIndexOf("/"); return i <= 0 ? "/" : path.slice(0, i); }

function formatSize(bytes, folder) {
  if (folder) return "—";
  const units = ["bytes", "KB", "MB", "GB", "TB"];
  let value = bytes, unit = 0;
  while (value >= 1000 && unit < units.length - 1) { value /= 1000; unit += 1; }
  return unit === 0 ? `${value} ${value === 1 ? "byte" : "bytes"}` : `${value.toFixed(1)} ${units[unit]}`;
}

function formatDate(seconds) {
  if (!seconds) return "";
  return new Date(seconds * 1000).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
}

function kindName(item) {
  if (item.folder) return "Folder";
  if (item.link) return "Alias";
  const type = item.type || "";
  const tail = type.split(".").pop();
  return tail ? tail.charAt(0).toUpperCase() + tail.slice(1) : "Document";
}

// The item's icon class: drawn by the style sheet (no icon font, no images from elsewhere).
function iconClass(item) {
  if (item.folder) return "folder";
  if (item.link) return "link";
  const type = item.type || "";
  if (/image|png|jpeg|gif|svg|heic|webp/.test(type)) return "image";
  if (/pdf/.test(type)) return "pdf";
  if (/audio|mp3|wav/.test(type)) return "audio";
  if (/movie|video|mpeg-4/.test(type)) return "movie";
  return "document";
}

function iconOf(item) { return element("span", { class: "icon " + iconClass(item), "aria-hidden": "true" }); }

// In the grid, images and PDFs show their thumbnail (the freedesktop cache, through the daemon);
// the icon stays when there is none.
function pictureOf(item) {
  const kind = iconClass(item);
  if (!$("items").classList.contains("grid") || (kind !== "image" && kind !== "pdf") || item.download === "notDownloaded" || !item.path.startsWith("/")) return iconOf(item);
  const picture = element("img", { class: "thumbnail", alt: "", loading: "lazy", src: `/api/thumbnail?path=${encodeURIComponent(item.path)}&m=${item.modified}` });
  picture.addEventListener("error", () => picture.replaceWith(iconOf(item)));
  return picture;
}

function tagColour(tag) { return finderColours[tag.toLowerCase()] || null; }

// MARK: Sidebar

async function loadPlaces() {
  const places = await api("places");
  state.places = places;
  const list = $("places");
  list.replaceChildren();
  const entries = [];
  if (places.home) entries.push({ name: "Home", path: places.home });
  for (const root of places.roots) if (root.path !== places.home) entries.push(root);
  entries.push({ name: "Drive", path: places.drive });
  for (const app of places.apps || []) entries.push(app);
  for (const entry of entries) {
    const place = element("button", { type: "button", class: "place", "data-path": entry.path, "aria-label": entry.name, onclick: () => openFolder(entry.path) }, iconOf({ folder: true }), entry.name);
    acceptDrops(place, entry.path);
    list.append(element("li", {}, place));
  }
  const tags = $("tags");
  tags.replaceChildren();
  for (const tag of places.tags) {
    const dot = element("span", { class: "dot", "aria-hidden": "true" });
    const colour = tagColour(tag.name);
    if (colour) dot.style.background = colour;
    tags.append(element("li", {}, element("button", { type: "button", class: "place", "data-tag": tag.name, "aria-label": `Tag ${tag.name}, ${tag.count} items`, onclick: () => showTagged(tag.name) }, dot, tag.name)));
  }
  markCurrentPlace();
}

function markCurrentPlace() {
  for (const button of document.querySelectorAll(".place")) {
    const current = (state.view === "folder" && button.dataset.path === state.path) || (state.view === "tagged" && button.dataset.tag === state.tag) || (button.dataset.view && button.dataset.view === state.view);
    if (current) button.setAttribute("aria-current", "page"); else button.removeAttribute("aria-current");
  }
}

// MARK: Views

async function openFolder(path) {
  state.view = "folder";
  state.path = path;
  $("search").value = "";
  history.replaceState(null, "", "/?path=" + encodeURIComponent(path));
  await reload();
}

async function showList(view) {
  state.view = view;
  $("search").value = "";
  await reload();
}

async function showTagged(tag) {
  state.view = "tagged";
  state.tag = tag;
  await reload();
}

function showPanel(view) {
  const panel = view === "grants" || view === "drive";
  $("grants-view").hidden = view !== "grants";
  $("drive-view").hidden = view !== "drive";
  $("items").hidden = panel;
  document.querySelector(".actions").hidden = panel;
}

async function loadGrants() {
  const { grants } = await api("grants");
  const list = $("grants");
  list.replaceChildren();
  if (grants.length === 0) list.append(element("li", {}, element("span", { class: "what" }, "No app has access to anything outside its container.")));
  for (const grant of grants) {
    const what = `${grant.appName}: ${grant.displayPath} (${grant.access === "read-write" ? "read and write" : "read only"}, ${grant.lifetime === "persistent" ? "kept" : "this session"}, from the ${grant.source})`;
    list.append(element("li", { "data-grant": grant.grant },
      element("span", { class: "what" }, what),
      element("button", { type: "button", class: "revoke", "aria-label": `Revoke ${grant.appName}'s access to ${grant.displayPath}`, onclick: async () => {
        try { await api("grants/revoke", { grant: grant.grant }); await loadGrants(); say(`Revoked ${grant.appName}'s access to ${grant.displayPath}`); }
        catch (error) { say(error.message); }
      } }, "Revoke")));
  }
  say(`${grants.length} ${grants.length === 1 ? "grant" : "grants"}`);
}

// Reloads what the page shows; `quiet` (a live update) leaves the status line as it is, so a
// message about what the user just did is not replaced by the item count. Returns once the page
// shows the newest listing: a reload started meanwhile (a live update) is waited for too, so the
// caller acts on what is on screen.
async function reload(keepSelection = false, quiet = false) {
  let run = reloadNow(keepSelection, quiet);
  state.latestReload = run;
  await run;
  while (state.latestReload !== run) {
    run = state.latestReload;
    await run;
  }
}

async function reloadNow(keepSelection, quiet) {
  showPanel(state.view);
  if (state.view === "grants" || state.view === "drive") {
    renderCrumbs([]);
    markCurrentPlace();
    try { if (state.view === "grants") await loadGrants(); else await loadDrive(); } catch (error) { say(error.message); }
    return;
  }
  const generation = ++state.generation;
  const wanted = Math.max(pageSize, keepSelection ? state.items.length : 0);
  let result;
  try {
    switch (state.view) {
      case "folder": result = await api(`list?path=${encodeURIComponent(state.path)}&sort=${state.sort}&desc=${state.desc ? 1 : 0}&offset=0&limit=${Math.min(wanted, 1000)}${pickerParameter()}`); break;
      case "search": result = await api(searchQuery()); break;
      case "recents": result = await api("recents?" + pickerParameter().slice(1)); break;
      case "favorites": result = await api("favorites?" + pickerParameter().slice(1)); break;
      case "tagged": result = await api("tagged?tag=" + encodeURIComponent(state.tag) + pickerParameter()); break;
      case "trash": result = await api("trash"); break;
      case "conflicts": result = await api("conflicts"); break;
    }
  } catch (error) {
    if (generation === state.generation) say(error.message);
    return;
  }
  if (generation !== state.generation) return;
  let items = result.items;
  if (state.view === "trash") items = items.map((entry) => ({ ...entry, path: "trash:" + entry.name, name: baseName(entry.originalPath), trashName: entry.name, modified: entry.deleted, type: "", tags: [] }));
  state.items = items;
  state.total = result.total ?? items.length;
  if (!keepSelection) { state.selected.clear(); state.anchor = -1; }
  else {
    const present = new Set(items.map((i) => i.path));
    for (const p of [...state.selected]) if (!present.has(p)) state.selected.delete(p);
    // The anchor follows its item, wherever the reload put it.
    const anchored = state.anchor >= 0 ? state.anchorPath : null;
    state.anchor = anchored && state.selected.has(anchored) ? items.findIndex((i) => i.path === anchored) : items.findIndex((i) => state.selected.has(i.path));
  }
  renderCrumbs(result.crumbs);
  render();
  markCurrentPlace();
  if (!quiet) say(describeView());
  // Timings for `folio bench web`: the first listing on screen, and each search from keystroke to results.
  if (!state.firstScreen) { state.firstScreen = true; performance.mark("folio-first-screen"); }
  if (state.view === "search" && state.searchStarted !== null) {
    (window.folioSearchTimings = window.folioSearchTimings || []).push({ query: $("search").value.trim(), ms: performance.now() - state.searchStarted });
    state.searchStarted = null;
  }
}

function describeView() {
  const count = state.total;
  const noun = count === 1 ? "item" : "items";
  switch (state.view) {
    case "folder": return `${count} ${noun}`;
    case "search": return `${count} ${count === 1 ? "result" : "results"}`;
    case "trash": return count === 0 ? "The trash is empty" : `${count} ${noun} in the trash`;
    default: return `${count} ${noun}`;
  }
}

function renderCrumbs(crumbs) {
  const list = $("crumbs");
  list.replaceChildren();
  const titles = { search: "Search", recents: "Recents", favorites: "Favorites", trash: "Trash", conflicts: "Conflicts", grants: "App Access", drive: "Drive Settings", tagged: `Tag: ${state.tag}` };
  if (state.view !== "folder") {
    list.append(element("li", {}, element("span", { "aria-current": "page" }, titles[state.view])));
    document.title = `${titles[state.view]} — Folio`;
    return;
  }
  for (const [index, crumb] of (crumbs || []).entries()) {
    const last = index === crumbs.length - 1;
    list.append(element("li", {}, element("button", { type: "button", "aria-label": crumb.name, "aria-current": last ? "page" : null, onclick: () => openFolder(crumb.path) }, crumb.name)));
  }
  document.title = `${baseName(state.path)} — Folio`;
}

function render() {
  const list = $("items");
  list.replaceChildren(...state.items.map((item, index) => row(item, index)), sentinel);
  updateActions();
}

// A search's passage of a document's text: the matched words (between U+0002 and U+0003 in the
// reply) marked, everything as text.
function snippetOf(snippet) {
  const parts = [];
  snippet.replace(/\s+/g, " ").split("\u0002").forEach((piece, index) => {
    if (index === 0) { parts.push(piece); return; }
    const [matched, ...rest] = piece.split("\u0003");
    parts.push(element("mark", {}, matched), rest.join(""));
  });
  return element("span", { class: "snippet" }, ...parts);
}

function row(item, index) {
  const badges = [];
  if (item.download === "notDownloaded") badges.push(element("span", { class: "badge" }, "in the cloud"));
  const download = state.downloads.get(item.path);
  if (download) {
    badges.push(element("span", { class: "badge downloading" }, `downloading ${Math.floor(download.fraction * 100)}%`));
    badges.push(element("button", { type: "button", class: "cancel-download", "aria-label": `Cancel the download of ${item.name}`, onclick: (event) => { event.stopPropagation(); cancelDownload(item.path); } }, "Cancel"));
  } else if (item.downloading) badges.push(element("span", { class: "badge" }, "downloading"));
  if (item.uploaded === false) badges.push(element("span", { class: "badge" }, "uploading"));
  if (item.error) badges.push(element("span", { class: "badge error", title: item.error }, "error: " + item.error));
  if (item.conflict) badges.push(element("span", { class: "badge conflict" }, "conflict"));
  if (item.favorite) badges.push(element("span", { class: "badge" }, "★"));
  const tagDots = (item.tags || []).map((tag) => {
    const dot = element("span", { class: "dot tagdot", title: tag, "aria-hidden": "true" });
    const colour = tagColour(tag);
    if (colour) dot.style.background = colour;
    return dot;
  });
  const where = state.view === "trash" ? item.originalPath : state.view !== "folder" ? parentOf(item.path) : null;
  const label = [item.name, kindName(item), item.tags && item.tags.length ? "tags " + item.tags.join(", ") : null, where ? "in " + where : null,
    item.snippet ? "text: " + item.snippet.replace(/[\u0002\u0003]/g, "") : null].filter(Boolean).join(", ");
  const unpickable = state.picker && item.pickable === false && !item.folder;
  const draggable = state.view !== "trash" && item.path.startsWith("/") && !state.picker;
  const node = element("li", {
      draggable: draggable ? "true" : null,
      class: unpickable ? "item unpickable" : "item", role: "option", "aria-disabled": unpickable ? "true" : null, id: "item-" + index, "data-index": index, "data-path": item.path,
      "aria-selected": state.selected.has(item.path) ? "true" : "false", "aria-label": label,
      onclick: (event) => select(index, event), ondblclick: () => activate(item),
    },
    pictureOf(item),
    element("span", { class: "name" }, item.name, ...tagDots, ...badges, where ? element("span", { class: "kind" }, "  " + where) : null,
      item.snippet ? snippetOf(item.snippet) : null),
    element("span", { class: "date" }, formatDate(item.modified)),
    element("span", { class: "size" }, formatSize(item.size, item.folder)),
    element("span", { class: "kind" }, kindName(item)));
  if (draggable) node.addEventListener("dragstart", (event) => dragStart(event, item));
  if (item.folder && state.view !== "trash") acceptDrops(node, item.path);
  return node;
}

// MARK: Drag and drop: items dragged onto a folder (in the list or the sidebar) move there.

function dragStart(event, item) {
  if (!state.selected.has(item.path)) { state.selected = new Set([item.path]); for (const n of $("items").querySelectorAll(".item")) n.setAttribute("aria-selected", n.dataset.path === item.path ? "true" : "false"); }
  event.dataTransfer.setData("application/x-folio-paths", JSON.stringify([...state.selected]));
  event.dataTransfer.effectAllowed = "move";
}

function acceptDrops(node, folder) {
  node.addEventListener("dragover", (event) => {
    if (!event.dataTransfer.types.includes("application/x-folio-paths")) return;
    event.preventDefault();
    event.dataTransfer.dropEffect = "move";
    node.classList.add("drop-target");
  });
  node.addEventListener("dragleave", () => node.classList.remove("drop-target"));
  node.addEventListener("drop", async (event) => {
    node.classList.remove("drop-target");
    const text = event.dataTransfer.getData("application/x-folio-paths");
    if (!text) return;
    event.preventDefault();
    const paths = JSON.parse(text).filter((path) => path !== folder && parentOf(path) !== folder);
    if (paths.length === 0) return;
    try {
      await api("move", { paths, to: folder });
      await reload(true);
      say(`Moved ${paths.length === 1 ? baseName(paths[0]) : paths.length + " items"} to ${baseName(folder)}`);
    } catch (error) { say(error.message); }
  });
}

function select(index, event = {}) {
  const item = state.items[index];
  if (!item) return;
  if (state.picker && !state.picker.params.multiple) event = { ...event, shiftKey: false, ctrlKey: false, metaKey: false };
  if (event.shiftKey && state.anchor >= 0) {
    const [from, to] = [Math.min(state.anchor, index), Math.max(state.anchor, index)];
    if (!event.ctrlKey && !event.metaKey) state.selected.clear();
    for (let i = from; i <= to; i += 1) state.selected.add(state.items[i].path);
  } else if (event.ctrlKey || event.metaKey) {
    if (state.selected.has(item.path)) state.selected.delete(item.path); else state.selected.add(item.path);
    state.anchor = index;
  } else {
    state.selected.clear();
    state.selected.add(item.path);
    state.anchor = index;
  }
  state.anchorPath = state.items[state.anchor]?.path ?? null;
  for (const node of $("items").querySelectorAll(".item")) node.setAttribute("aria-selected", state.selected.has(node.dataset.path) ? "true" : "false");
  $("items").setAttribute("aria-activedescendant", "item-" + index);
  document.getElementById("item-" + index)?.scrollIntoView({ block: "nearest" });
  updateActions();
}

function activate(item) {
  if (item.folder && state.view !== "trash") openFolder(item.path);
  else if (state.picker) { if (item.pickable) choosePicked(); }
  else if (state.view !== "trash" && !item.folder) openDocument(item, null);
}

// Opens a document in an app (nil: the type's default), as `folio open` does.
async function openDocument(item, app) {
  try { await api("open", { path: item.path, app }); say(`Opening ${item.name}${app ? "" : " in its app"}`); }
  catch (error) { say(error.message); }
}

async function showNewDocument() {
  if (state.view !== "folder") return;
  showDialog("new-dialog");
  $("new-templates").replaceChildren();
  let templates;
  try { ({ templates } = await api("templates")); } catch (error) { $("new-error").textContent = error.message; return; }
  if (templates.length === 0) $("new-templates").append(element("li", {}, element("span", {}, "No templates: put documents in your Templates folder, or register an app that ships some.")));
  for (const template of templates) {
    const label = template.app ? `${template.name} (${template.app})` : template.name;
    $("new-templates").append(element("li", { "data-template": template.path },
      element("span", {}, label),
      element("button", { type: "button", class: "create", "aria-label": `New ${label}`, onclick: async () => {
        try {
          const result = await api("new", { folder: state.path, template: template.path });
          $("new-dialog").close();
          state.selected = new Set([result.path]);
          await reload(true);
          say(`Created ${baseName(result.path)}`);
          renameSelected();
        } catch (error) { $("new-error").textContent = error.message; }
      } }, "Create")));
  }
}

async function showOpenWith() {
  const [item] = selectedItems();
  if (!item) return;
  showDialog("open-dialog");
  $("open-title").textContent = `Open “${item.name}” with`;
  $("open-apps").replaceChildren();
  let answer;
  try { answer = await api("handlers?path=" + encodeURIComponent(item.path)); } catch (error) { $("open-error").textContent = error.message; return; }
  $("open-type").textContent = `${answer.typeName}. ` + (answer.defaultHandler ? `Opens in ${answer.defaultHandler.name} by default.` : "No app opens it by default.");
  if (answer.handlers.length === 0) $("open-apps").append(element("li", {}, element("span", {}, "No app opens this kind of document.")));
  for (const handler of answer.handlers) {
    const isDefault = answer.defaultHandler && answer.defaultHandler.app === handler.app;
    $("open-apps").append(element("li", { "data-app": handler.app },
      element("span", {}, handler.name + (isDefault ? " (default)" : "")),
      element("button", { type: "button", class: "open-in", "aria-label": `Open in ${handler.name}`, onclick: () => { $("open-dialog").close(); openDocument(item, handler.app); } }, "Open"),
      isDefault || handler.desktop ? null : element("button", { type: "button", class: "make-default", "aria-label": `Always open this kind of document in ${handler.name}`, onclick: async () => {
        try { await api("handlers/default", { path: item.path, app: handler.app }); await showOpenWith(); say(`${answer.typeName} now opens in ${handler.name}`); }
        catch (error) { $("open-error").textContent = error.message; }
      } }, "Always Use")));
  }
}

function selectedItems() { return state.items.filter((item) => state.selected.has(item.path)); }

function updateActions() {
  const chosen = selectedItems();
  const inTrash = state.view === "trash";
  const one = chosen.length === 1;
  $("rename").disabled = inTrash || !one;
  $("duplicate").disabled = inTrash || !one || chosen[0].folder;
  $("tag").disabled = inTrash || !one;
  $("favorite").disabled = inTrash || !one;
  $("favorite").setAttribute("aria-pressed", one && chosen[0].favorite ? "true" : "false");
  $("move").disabled = inTrash || chosen.length === 0;
  $("trash").disabled = inTrash || chosen.length === 0;
  $("versions").disabled = inTrash || !one || chosen[0].folder;
  $("open-with").disabled = inTrash || !one || chosen[0].folder || chosen[0].download === "notDownloaded";
  const inDrive = state.view === "folder" && state.places && (state.path === state.places.drive || state.path.startsWith(state.places.drive + "/"));
  for (const id of ["download", "evict", "pin"]) $(id).hidden = !inDrive;
  $("download").disabled = !inDrive || chosen.length === 0 || !chosen.some((item) => item.folder || item.download === "notDownloaded");
  $("evict").disabled = !inDrive || chosen.length === 0 || !chosen.some((item) => item.folder || item.download === "current" || item.download === "downloaded");
  $("pin").disabled = !inDrive || !one;
  $("pin").setAttribute("aria-pressed", one && chosen[0].pinned ? "true" : "false");
  $("resolve").hidden = !(one && chosen[0].conflict);
  $("resolve").disabled = !(one && chosen[0].conflict);
  $("trash").hidden = inTrash;
  $("restore").hidden = !inTrash;
  $("restore").disabled = !inTrash || chosen.length === 0;
  $("new-folder").disabled = state.view !== "folder";
  $("new-document").disabled = state.view !== "folder";
  if (state.picker) {
    const mode = state.picker.params.mode;
    const destination = mode === "export" || mode === "move";
    $("picker-choose").disabled = destination ? state.view !== "folder" : chosen.length === 0 || chosen.some((item) => !item.pickable);
  }
}

// MARK: The picker

function pickerParameter() { return state.picker ? "&picker=" + state.picker.request : ""; }

async function refreshPicker() {
  let requests = [];
  try { requests = (await api("picker")).requests; } catch (error) { say(error.message); return; }
  if (state.picker && requests.some((r) => r.request === state.picker.request)) return;
  if (state.picker) leavePicker("The picker request ended");
  if (requests.length > 0) enterPicker(requests[0]);
}

function describeTypes(types) {
  if (!types || types.length === 0) return "";
  return " (" + types.map((t) => t.split(".").pop()).join(", ") + ")";
}

async function enterPicker(request) {
  state.picker = request;
  const { mode, multiple, types, urls, directory } = request.params;
  const app = request.appName || request.app || "An app";
  const names = (urls || []).map(baseName).join(", ");
  const texts = {
    open: `${app} wants to open ${multiple ? "documents" : "a document"}${describeTypes(types)}.`,
    import: `${app} wants a copy of ${multiple ? "documents" : "a document"}${describeTypes(types)}.`,
    export: `${app} wants to export “${names}”: choose a folder.`,
    move: `${app} wants to move “${names}”: choose a folder.`,
  };
  $("picker-text").textContent = texts[mode] || `${app} wants a document.`;
  $("picker-error").textContent = "";
  $("picker-choose").textContent = pickerVerbs[mode] || "Choose";
  $("picker-choose").setAttribute("aria-label", pickerVerbs[mode] || "Choose");
  $("picker-bar").hidden = false;
  document.body.classList.add("picking");
  document.title = "Choose — Folio";
  const start = directory && state.places && [state.places.home, state.places.drive].some((root) => root && (directory === root || directory.startsWith(root + "/"))) ? directory : state.path || state.places.home;
  await openFolder(start);
  $("picker-choose").focus();
}

function leavePicker(message) {
  state.picker = null;
  $("picker-bar").hidden = true;
  document.body.classList.remove("picking");
  reload(true);
  if (message) say(message);
}

async function choosePicked() {
  if (!state.picker) return;
  const { mode } = state.picker.params;
  const paths = mode === "export" || mode === "move" ? [state.path] : selectedItems().map((item) => item.path);
  try {
    await api("picker/choose", { request: state.picker.request, paths });
    const app = state.picker.appName || state.picker.app || "the app";
    leavePicker(`Chosen for ${app}`);
    await refreshPicker();
  } catch (error) {
    $("picker-error").textContent = error.message;
  }
}

async function cancelPicker() {
  if (!state.picker) return;
  try { await api("picker/choose", { request: state.picker.request, paths: null }); } catch (error) { say(error.message); }
  leavePicker("Cancelled");
  await refreshPicker();
}

async function loadMore() {
  if (state.view !== "folder" || state.loading || state.items.length >= state.total) return;
  state.loading = true;
  const generation = state.generation;
  try {
    const result = await api(`list?path=${encodeURIComponent(state.path)}&sort=${state.sort}&desc=${state.desc ? 1 : 0}&offset=${state.items.length}&limit=${pageSize}${pickerParameter()}`);
    if (generation !== state.generation) return;
    const start = state.items.length;
    state.items.push(...result.items);
    state.total = result.total;
    sentinel.before(...result.items.map((item, i) => row(item, start + i)));
  } catch (error) {
    say(error.message);
  } finally {
    state.loading = false;
  }
}

// MARK: Search

function searchQuery() {
  const text = $("search").value.trim();
  let query = "search?q=" + encodeURIComponent(text);
  const kind = $("search-kind").value;
  if (kind) query += "&kind=" + kind;
  const days = Number($("search-date").value);
  if (days) query += "&since=" + Math.floor(Date.now() / 1000 - days * 86400);
  return query + pickerParameter();
}

// Each keystroke searches at once; an answer to an older query is dropped when it arrives late
// (`state.generation`).
function searchChanged() {
  if ($("search").value.trim() === "") { if (state.view === "search") openFolder(state.path || state.places?.home || "/"); return; }
  state.view = "search";
  state.searchStarted = performance.now();
  reload();
}

// MARK: Actions

function ask(dialogID, setUp) {
  return new Promise((resolve) => {
    const dialog = $(dialogID);
    const cancel = dialog.querySelector("[value=cancel]");
    const done = (value) => { dialog.close(); cancel.onclick = null; dialog.onsubmit = null; dialog.oncancel = null; resolve(value); };
    cancel.onclick = () => done(null);
    dialog.oncancel = () => done(null);
    dialog.querySelector(".error").textContent = "";
    const finish = setUp(dialog);
    dialog.onsubmit = async (event) => {
      event.preventDefault();
      try { const value = await finish(); if (value !== undefined) done(value); }
      catch (error) { dialog.querySelector(".error").textContent = error.message; }
    };
    dialog.showModal();
  });
}

async function renameSelected() {
  const [item] = selectedItems();
  if (!item) return;
  await ask("name-dialog", (dialog) => {
    $("name-title").textContent = `Rename “${item.name}”`;
    const input = $("name-input");
    input.value = item.name;
    const dot = item.folder ? -1 : item.name.lastIndexOf(".");
    input.focus();
    input.setSelectionRange(0, dot > 0 ? dot : item.name.length);
    return async () => {
      const name = input.value.trim();
      if (name === item.name) return true;
      const result = await api("rename", { path: item.path, name });
      state.selected = new Set([result.path]);
      await reload(true);
      say(`Renamed to ${name}`);
      return true;
    };
  });
}

async function newFolder() {
  if (state.view !== "folder") return;
  await ask("name-dialog", () => {
    $("name-title").textContent = "New folder";
    const input = $("name-input");
    input.value = "untitled folder";
    input.focus();
    input.select();
    return async () => {
      const result = await api("folder", { parent: state.path, name: input.value.trim() });
      state.selected = new Set([result.path]);
      await reload(true);
      say(`Created ${baseName(result.path)}`);
      return true;
    };
  });
}

async function moveSelected() {
  const chosen = selectedItems();
  if (chosen.length === 0) return;
  let folder = state.view === "folder" ? state.path : state.places.home;
  await ask("move-dialog", () => {
    const show = async (path) => {
      folder = path;
      $("move-where").textContent = path;
      const listing = await api(`list?path=${encodeURIComponent(path)}&limit=1000`);
      const folders = listing.items.filter((item) => item.folder);
      const up = listing.crumbs.length > 1 ? [element("li", {}, element("button", { type: "button", class: "place", "aria-label": "Enclosing folder", onclick: () => show(parentOf(path)) }, "↑ .."))] : [];
      $("move-folders").replaceChildren(...up, ...folders.map((f) => element("li", {}, element("button", { type: "button", class: "place", "aria-label": f.name, onclick: () => show(f.path) }, iconOf(f), f.name))));
    };
    show(folder).catch((error) => { $("move-error").textContent = error.message; });
    $("move-title").textContent = chosen.length === 1 ? `Move “${chosen[0].name}” to` : `Move ${chosen.length} items to`;
    return async () => {
      await api("move", { paths: chosen.map((item) => item.path), to: folder });
      await reload(true);
      say(`Moved ${chosen.length === 1 ? chosen[0].name : chosen.length + " items"} to ${baseName(folder)}`);
      return true;
    };
  });
}

async function duplicateSelected() {
  const [item] = selectedItems();
  if (!item) return;
  try {
    const result = await api("duplicate", { path: item.path });
    state.selected = new Set([result.path]);
    await reload(true);
    say(`Duplicated as ${baseName(result.path)}`);
  } catch (error) { say(error.message); }
}

async function trashSelected() {
  const chosen = selectedItems();
  if (chosen.length === 0 || state.view === "trash") return;
  try {
    await api("trash", { paths: chosen.map((item) => item.path) });
    await reload();
    say(`Moved ${chosen.length === 1 ? chosen[0].name : chosen.length + " items"} to the Trash`);
  } catch (error) { say(error.message); }
}

async function restoreSelected() {
  const chosen = selectedItems();
  try {
    for (const item of chosen) await api("restore", { name: item.trashName });
    await reload();
    say(`Put back ${chosen.length === 1 ? chosen[0].name : chosen.length + " items"}`);
  } catch (error) { say(error.message); }
}

async function tagSelected() {
  const [item] = selectedItems();
  if (!item) return;
  await ask("tag-dialog", () => {
    $("tag-title").textContent = `Tags of “${item.name}”`;
    const input = $("tag-input");
    input.value = (item.tags || []).join(", ");
    input.focus();
    return async () => {
      const tags = input.value.split(",").map((t) => t.trim()).filter((t) => t.length > 0);
      await api("tags", { path: item.path, tags });
      await reload(true);
      await loadPlaces();
      say(tags.length ? `Tagged ${item.name}: ${tags.join(", ")}` : `Removed the tags of ${item.name}`);
      return true;
    };
  });
}

async function toggleFavorite() {
  const [item] = selectedItems();
  if (!item) return;
  try {
    await api("favorite", { path: item.path, favorite: !item.favorite });
    await reload(true);
    say(item.favorite ? `Removed ${item.name} from Favorites` : `Added ${item.name} to Favorites`);
  } catch (error) { say(error.message); }
}

// MARK: Versions and conflicts

function showDialog(id) { const dialog = $(id); dialog.querySelector(".error").textContent = ""; if (!dialog.open) dialog.showModal(); return dialog; }

function versionLabel(version) {
  if (version.kind === "current") return `now, ${formatDate(version.modified)} (current)`;
  const when = formatDate(version.modified);
  const from = version.computer ? ` from ${version.computer}` : "";
  const flags = version.conflict ? (version.resolved ? "resolved conflict" : "conflict") : version.kind;
  return `${when}${from} (${flags})`;
}

async function showVersions() {
  const [item] = selectedItems();
  if (!item) return;
  const dialog = showDialog("versions-dialog");
  $("versions-title").textContent = `Versions of “${item.name}”`;
  $("versions-preview").textContent = "";
  $("versions-list").replaceChildren();
  let listing;
  try { listing = await api("versions?path=" + encodeURIComponent(item.path)); } catch (error) { $("versions-error").textContent = error.message; return; }
  if (listing.versions.length === 0) $("versions-list").append(element("li", {}, element("span", {}, "No versions are kept of this document yet.")));
  for (const version of [...listing.versions].reverse()) {
    const label = versionLabel(version);
    const current = version.kind === "current";
    $("versions-list").append(element("li", { "data-version": version.id },
      element("span", {}, label),
      version.text !== undefined && version.text !== null ? element("button", { type: "button", "aria-label": `Preview ${label}`, onclick: () => { $("versions-preview").textContent = version.text; } }, "Preview") : null,
      current ? null : element("button", { type: "button", class: "restore-version", "aria-label": `Restore ${label}`, onclick: async () => {
        try {
          await api("versions/restore", { path: item.path, id: version.id });
          dialog.close();
          await reload(true);
          say(`Restored ${item.name} to the version of ${formatDate(version.modified)}`);
        } catch (error) { $("versions-error").textContent = error.message; }
      } }, "Restore")));
  }
}

// Lines of `a` and `b` as a diff: each line kept, added (only in b) or removed (only in a).
function diffLines(a, b) {
  const x = a.split("\n"), y = b.split("\n");
  if (x.length * y.length > 4000000) return [...x.map((t) => ["removed", t]), ...y.map((t) => ["added", t])];
  const table = Array.from({ length: x.length + 1 }, () => new Uint32Array(y.length + 1));
  for (let i = x.length - 1; i >= 0; i -= 1) for (let j = y.length - 1; j >= 0; j -= 1) table[i][j] = x[i] === y[j] ? table[i + 1][j + 1] + 1 : Math.max(table[i + 1][j], table[i][j + 1]);
  const out = [];
  let i = 0, j = 0;
  while (i < x.length && j < y.length) {
    if (x[i] === y[j]) { out.push(["same", x[i]]); i += 1; j += 1; }
    else if (table[i + 1][j] >= table[i][j + 1]) { out.push(["removed", x[i]]); i += 1; }
    else { out.push(["added", y[j]]); j += 1; }
  }
  while (i < x.length) { out.push(["removed", x[i]]); i += 1; }
  while (j < y.length) { out.push(["added", y[j]]); j += 1; }
  return out;
}

async function resolveConflict() {
  const [item] = selectedItems();
  if (!item) return;
  const dialog = showDialog("conflict-dialog");
  $("conflict-title").textContent = `Resolve the conflict of “${item.name}”`;
  $("conflict-columns").replaceChildren();
  let listing;
  try { listing = await api("versions?path=" + encodeURIComponent(item.path)); } catch (error) { $("conflict-error").textContent = error.message; return; }
  const current = listing.current;
  const rivals = listing.versions.filter((v) => v.conflict && !v.resolved);
  const keep = async (id, both) => {
    try {
      const result = await api("conflicts/resolve", { path: item.path, keep: id, both });
      dialog.close();
      await reload(true);
      say(both ? `Kept both: ${[item.name, ...result.kept.map(baseName)].join(", ")}` : `Resolved the conflict of ${item.name}`);
    } catch (error) { $("conflict-error").textContent = error.message; }
  };
  const column = (version, title) => {
    let body;
    if (listing.textual && typeof version.text === "string" && typeof current.text === "string") {
      const lines = version === current ? current.text.split("\n").map((t) => ["same", t]) : diffLines(current.text, version.text);
      body = element("div", { class: "diff", role: "group", "aria-label": `Contents of ${title}` }, ...lines.map(([kind, text]) => element("div", { class: kind }, text || " ")));
    } else {
      body = element("p", { class: "hint" }, `${formatSize(version.size || item.size, false)}, ${formatDate(version.modified || item.modified)}`);
    }
    return element("section", { "aria-label": title },
      element("h3", {}, title),
      element("p", { class: "hint" }, versionLabel(version)),
      body,
      element("button", { type: "button", class: "keep", "aria-label": `Keep ${title}`, onclick: () => keep(version === current ? null : version.id, false) }, "Keep This"));
  };
  $("conflict-columns").append(column(current, "This computer’s version"), ...rivals.map((v) => column(v, `The version from ${v.computer || "another computer"}`)));
  $("conflict-both").onclick = () => keep(null, true);
}

// MARK: The drive

async function loadDrive() {
  const drive = await api("drive");
  state.drive = drive;
  const configuration = drive.configuration;
  $("drive-summary").textContent = configuration
    ? `${configuration.description}. ${drive.local} local, ${drive.cloud} in the cloud, ${drive.uploading} waiting to upload${drive.errors ? `, ${drive.errors} in error` : ""}. Its files are in ${drive.replica}.`
    : "No drive is set up. Choose where it lives below; it is checked before it is saved.";
  $("drive-sync").disabled = !configuration;
  const last = drive.passes[drive.passes.length - 1];
  $("drive-held").hidden = !(last && last.held > 0);
  if (last && last.held > 0) $("drive-held-text").textContent = `The last pass held back ${last.held} deletions: so many items went at once (on the server or here) that Folio waits for you before deleting their copies on the other side.`;
  $("drive-passes").replaceChildren(...[...drive.passes].reverse().map((pass) => element("li", { class: pass.error ? "failed" : null },
    `${formatDate(pass.ended)} (${pass.reason}): ` + (pass.error ? `failed: ${pass.error}` : `${pass.uploaded} up, ${pass.downloaded} down, ${pass.placeholders} new in the cloud, ${pass.deletedOnServer + pass.deletedHere} deleted, ${pass.conflicts} conflicts${pass.held ? `, ${pass.held} deletions held` : ""}${pass.deferred ? `, ${pass.deferred} to try again` : ""}${pass.setAside ? `, ${pass.setAside} set aside (refused each time)` : ""}`))));
  if (drive.passes.length === 0) $("drive-passes").append(element("li", {}, "No pass yet."));
  renderDownloads(drive.downloads);
  if (configuration && !$("drive-form").dataset.touched) {
    $("drive-kind").value = configuration.kind;
    $("drive-url").value = configuration.url;
    $("drive-user").value = configuration.user || "";
    $("drive-bucket").value = configuration.bucket ? configuration.bucket + (configuration.prefix ? "/" + configuration.prefix : "") : "";
    $("drive-arguments").value = (configuration.arguments || []).join("\n");
  }
  driveKindChanged();
}

function driveKindChanged() {
  const kind = $("drive-kind").value;
  for (const label of document.querySelectorAll("#drive-form [data-for]")) label.hidden = !label.dataset.for.split(" ").includes(kind);
  $("drive-url-label").textContent = { webdav: "Server address (https://…)", s3: "Server address (https://…)", folder: "Folder", provider: "Program" }[kind];
}

async function saveDrive(event) {
  event.preventDefault();
  const kind = $("drive-kind").value;
  const form = { kind, url: $("drive-url").value.trim() };
  if (kind === "webdav" || kind === "s3") { form.user = $("drive-user").value.trim(); form.secret = $("drive-secret").value; }
  if (kind === "s3") { form.bucket = $("drive-bucket").value.trim(); form.region = $("drive-region").value.trim(); }
  if (kind === "provider") form.arguments = $("drive-arguments").value.split("\n").map((a) => a.trim()).filter((a) => a.length > 0);
  $("drive-error").textContent = "";
  $("drive-save").disabled = true;
  say("Checking the drive…");
  try {
    await api("drive/setup", form);
    $("drive-secret").value = "";
    delete $("drive-form").dataset.touched;
    await loadDrive();
    say("Drive checked and saved");
  } catch (error) {
    $("drive-error").textContent = error.message;
    say("The drive was not saved");
  } finally {
    $("drive-save").disabled = false;
  }
}

async function syncDrive(confirmDeletions) {
  say(confirmDeletions ? "Deleting on the server…" : "Syncing…");
  let outcome;
  try {
    const pass = await api("drive/sync", { confirmDeletions });
    outcome = pass.error ? `The pass failed: ${pass.error}` : `Synced: ${pass.uploaded} up, ${pass.downloaded} down, ${pass.placeholders} new in the cloud`;
  } catch (error) { outcome = error.message; }
  if (state.view === "drive") await loadDrive().catch(() => {});
  say(outcome);
}

function renderDownloads(downloads) {
  state.downloads = new Map(downloads.map((d) => [d.path, d]));
  const list = $("drive-downloads");
  list.replaceChildren(...downloads.map((d) => element("li", {},
    element("span", {}, baseName(d.path)),
    element("progress", { max: "1", value: String(d.fraction), "aria-label": `Download of ${baseName(d.path)}` }),
    element("span", {}, `${Math.floor(d.fraction * 100)}%`),
    element("button", { type: "button", "aria-label": `Cancel the download of ${baseName(d.path)}`, onclick: () => cancelDownload(d.path) }, "Cancel"))));
  if (downloads.length === 0) list.append(element("li", {}, "None under way."));
}

async function downloadSelected() {
  const chosen = selectedItems();
  try { await api("drive/download", { paths: chosen.map((item) => item.path) }); say(`Downloading ${chosen.length === 1 ? chosen[0].name : chosen.length + " items"}`); }
  catch (error) { say(error.message); }
}

async function cancelDownload(path) {
  try { await api("drive/cancel", { path }); say(`Cancelled the download of ${baseName(path)}`); } catch (error) { say(error.message); }
}

async function evictSelected() {
  const chosen = selectedItems();
  try {
    const result = await api("drive/evict", { paths: chosen.map((item) => item.path) });
    await reload(true);
    say(result.refused.length ? `Not removed: ${result.refused.join("; ")}` : `Removed the download of ${chosen.length === 1 ? chosen[0].name : chosen.length + " items"}`);
  } catch (error) { say(error.message); }
}

async function togglePin() {
  const [item] = selectedItems();
  if (!item) return;
  try { await api("drive/pin", { paths: [item.path], pinned: !item.pinned }); await reload(true); say(item.pinned ? `${item.name} may be removed when space is short` : `${item.name} stays downloaded`); }
  catch (error) { say(error.message); }
}

// A download's progress changes only its badge; a row is drawn again only when its download starts
// or ends, so the rows (and what a person is about to click) stay put while files download.
function progressArrived(downloads) {
  const previous = new Set(state.downloads.keys());
  renderDownloads(downloads);
  window.folioProgressSeen = (window.folioProgressSeen || []).concat(downloads.map((d) => d.fraction));
  const ended = [...previous].filter((path) => !state.downloads.has(path));
  for (const node of $("items").querySelectorAll(".item")) {
    const path = node.dataset.path, download = state.downloads.get(path);
    const badge = node.querySelector(".badge.downloading");
    if (download && badge) {
      badge.textContent = `downloading ${Math.floor(download.fraction * 100)}%`;
    } else if (download || previous.has(path)) {
      const index = Number(node.dataset.index);
      if (state.items[index]) node.replaceWith(row(state.items[index], index));
    }
  }
  if (ended.length > 0) reload(true, true);
}

// MARK: Keyboard

function keyDown(event) {
  if (event.target.closest("dialog")) return;
  const typing = event.target.matches("input, select, textarea, [contenteditable]");
  if (event.key === "/" && !typing) { event.preventDefault(); $("search").focus(); return; }
  if (event.key === "Escape" && state.picker && !typing) { cancelPicker(); return; }
  if (typing) { if (event.key === "Escape") { $("search").value = ""; searchChanged(); $("items").focus(); } return; }
  const current = state.anchor;
  switch (event.key) {
    case "ArrowDown": event.preventDefault(); select(Math.min(state.items.length - 1, current + 1), event); if (current + 1 > state.items.length - 20) loadMore(); break;
    case "ArrowUp": event.preventDefault(); select(Math.max(0, current - 1), event); break;
    case "Home": event.preventDefault(); select(0, event); break;
    case "End": event.preventDefault(); select(state.items.length - 1, event); break;
    case "Enter": if (current >= 0 && current < state.items.length) activate(state.items[current]); break;
    case "Backspace": if (event.altKey || state.view !== "folder") break; event.preventDefault(); if (state.path !== state.places?.home) openFolder(parentOf(state.path)); break;
    case "F2": event.preventDefault(); renameSelected(); break;
    case "Delete": event.preventDefault(); trashSelected(); break;
    case "a":
      if ((event.ctrlKey || event.metaKey) && !(state.picker && !state.picker.params.multiple)) { event.preventDefault(); for (const item of state.items) state.selected.add(item.path); render(); }
      break;
  }
}

// MARK: Live changes

function listen() {
  const events = new EventSource("/api/events");
  events.addEventListener("picker", () => refreshPicker());
  events.addEventListener("progress", (event) => progressArrived(JSON.parse(event.data).downloads));
  events.addEventListener("download-failed", (event) => { const { path, error } = JSON.parse(event.data); say(`The download of ${baseName(path)} stopped: ${error}`); });
  events.addEventListener("open", () => refreshPicker());
  events.addEventListener("folders", (event) => {
    const { folders } = JSON.parse(event.data);
    // Settings panels do not list files; the others show what may have changed.
    const affects = state.view === "folder" ? folders.includes(state.path) : !["trash", "grants", "drive"].includes(state.view);
    if (affects) reload(true, true);
    if (state.view === "trash" && folders.some((f) => f.endsWith("/Trash/files"))) reload(true, true);
  });
}

// MARK: Start

async function start() {
  $("search").addEventListener("input", searchChanged);
  $("search-kind").addEventListener("change", () => { if ($("search").value.trim()) { state.view = "search"; reload(); } });
  $("search-date").addEventListener("change", () => { if ($("search").value.trim()) { state.view = "search"; reload(); } });
  $("new-folder").addEventListener("click", newFolder);
  $("rename").addEventListener("click", renameSelected);
  $("move").addEventListener("click", moveSelected);
  $("duplicate").addEventListener("click", duplicateSelected);
  $("tag").addEventListener("click", tagSelected);
  $("favorite").addEventListener("click", toggleFavorite);
  $("trash").addEventListener("click", trashSelected);
  $("restore").addEventListener("click", restoreSelected);
  $("picker-choose").addEventListener("click", choosePicked);
  $("versions").addEventListener("click", showVersions);
  $("open-with").addEventListener("click", showOpenWith);
  $("new-document").addEventListener("click", showNewDocument);
  $("new-close").addEventListener("click", () => $("new-dialog").close());
  $("open-close").addEventListener("click", () => $("open-dialog").close());
  $("download").addEventListener("click", downloadSelected);
  $("evict").addEventListener("click", evictSelected);
  $("pin").addEventListener("click", togglePin);
  $("drive-form").addEventListener("submit", saveDrive);
  $("drive-form").addEventListener("input", () => { $("drive-form").dataset.touched = "1"; });
  $("drive-kind").addEventListener("change", driveKindChanged);
  $("drive-sync").addEventListener("click", () => syncDrive(false));
  $("drive-confirm").addEventListener("click", () => syncDrive(true));
  $("resolve").addEventListener("click", resolveConflict);
  $("versions-close").addEventListener("click", () => $("versions-dialog").close());
  $("conflict-cancel").addEventListener("click", () => $("conflict-dialog").close());
  $("picker-cancel").addEventListener("click", cancelPicker);
  $("sort").addEventListener("change", () => { state.sort = $("sort").value; reload(); });
  $("order").addEventListener("click", () => { state.desc = !state.desc; $("order").setAttribute("aria-pressed", String(state.desc)); $("order").textContent = state.desc ? "↑" : "↓"; reload(); });
  $("view").addEventListener("click", () => {
    const grid = $("items").classList.toggle("grid");
    $("items").classList.toggle("list", !grid);
    $("view").setAttribute("aria-pressed", String(grid));
    render();
  });
  $("menu").addEventListener("click", () => { const open = $("sidebar").classList.toggle("open"); $("menu").setAttribute("aria-expanded", String(open)); });
  for (const button of document.querySelectorAll("[data-view]")) button.addEventListener("click", () => showList(button.dataset.view));
  document.addEventListener("keydown", keyDown);
  new IntersectionObserver((entries) => { if (entries.some((e) => e.isIntersecting)) loadMore(); }, { root: $("items"), rootMargin: "400px" }).observe(sentinel);
  await loadPlaces();
  const wanted = new URLSearchParams(location.search).get("path");
  await openFolder(wanted || state.places.home || state.places.drive);
  listen();
}

start().catch((error) => say(error.message));
