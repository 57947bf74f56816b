// The Label page's labeling unit (studio/labeling.py has the server's side). The browser holds the
// next few items the server chose (their text, the scale, what is shown once labeled), shows one,
// takes its keys and clicks, shows the next one at once, and sends every change to the server in the
// background, each naming its item.
//
// A key is taken for the item whose text is on screen as it is pressed: an item counts as shown from
// the first frame painted after it was drawn, and a key pressed before (its event's time) is refused,
// as is one pressed while no item is shown (the next ones still on their way); a refused key is counted
// and said until the user dismisses the notice. A key refused so (typed ahead of the items) holds the keys
// that label and go on until Esc or the notice's Dismiss: typed ahead, the next digit is meant for a later
// item than the one on screen.
//
// A label may carry a reason: after the digit, Tab reaches the aspect's reason box on the item, and
// Enter there saves the label again with the reason (and goes on once the item is labeled); keys typed
// in the box are its text, never ratings. In a queue the server may ask for a reason: the scale's ends
// (the data's "ask", per aspect) are held at once, the rest ("verdict": the item's other labels, read on
// the server only) once the server answers, the unit waiting for that answer before going on from a
// label without a reason. An item with a reason asked for is not left until the reason is given.
//
// To the server: the component's state "outbox", every change not answered yet, in the order made:
// {seq, op: "label" | "undo" | "skip", item, dataset, annotator, ...}; a label has aspect, score,
// seconds (from the item shown, or its last label, to the key; with a reason, to its Enter) and reason
// (the reason box's saved text, "" for none), an undo the seq it takes back ("of") and the score it
// puts back ("previous"). Streamlit keeps only the newest state when reruns pile up, and that state
// holds every change not answered: none is lost or reordered. The server stores them in order and
// answers in the component's data: "acked", the highest seq it took, "failed", those it could not
// store, with why, and "asked", the labels it did not store for want of a reason, with why. An outbox
// left unanswered is sent again every few seconds and said: a lost connection keeps the changes in the
// tab until the server takes them.
//
// From the server (data): "session" (a new one starts the browser's afresh: another dataset,
// annotator, aspects or order), "dataset", "annotator", "aspects" [{name, min, max, words, ask: {score: why}}]
// (words: a categorical aspect's, one per digit from min, shown beside it; [] for scores),
// "blind", "verdict", "reasonChars", "total", "done" (items labeled, as stored), "queue" (the ids of the
// next items to label, in the order the server chose), "history" (the ids of the items labeled last,
// oldest first: ← reaches them after a reload) and "items" [{id, place, group, earlier, recent, response,
// grounding, captions, labels, reasons, complete, shown, system}] for those ids.

const KEYS = {
  Enter: "Enter", ArrowRight: "→", ArrowLeft: "←", s: "s", S: "s", u: "u", U: "u", Tab: "Tab", Escape: "Esc",
};
const AHEAD = new Set(["early", "soon", "none"]); // refusals of a key typed ahead of the items: the next keys are held
// ms: a digit or s pressed sooner after its item appeared is no answer to it (quicker than anyone reacts to what
// they see): it was typed ahead, and would label an item nobody read
const SOON = 150;
const RESEND = 3000; // ms: an outbox unanswered this long is sent again
const LOST = 8000; // ms: ... and said to be unsaved
const LATEST = 12; // the keys not taken listed one by one, the newest
// Why a key was not taken: how the running count says it, and how the latest keys say it.
const REFUSED = {
  early: ["pressed before its item was on screen", "before it was on screen"],
  soon: ["pressed under 0.15 s after its item appeared, too soon to be meant for it", "too soon after it appeared"],
  none: ["pressed while no item was on screen", "no item on screen"],
  scale: ["a digit not on the aspect's scale", "not on its scale"],
  unlabeled: ["Enter or → on an item not labeled yet (a digit labels it, s skips it)", "not labeled yet"],
  held: ["held after a key typed ahead of its item", "held"],
};

const tab = (window.gevalLabelUnit ??= {
  seq: 0, outbox: [], failed: [], failedSeen: new Set(), failedCleared: 0, refused: [], cleared: 0, held: false,
  askedSeen: new Set(), answeredAt: 0, sentAt: 0, view: null, send: null, root: null, listener: null, timer: null,
  appeared: null, // the item on screen and when it was first painted ({item, at})
});

function typing(target) {
  // keys typed into a text box, a menu or a number field are theirs, not labels
  return target instanceof HTMLElement
    && (target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName));
}

function element(tag, className, text) {
  const made = document.createElement(tag);
  if (className) made.className = className;
  if (text !== undefined) made.textContent = text;
  return made;
}

function inWords(aspect, score) {
  // a label as the annotator reads it: a categorical aspect's word beside its digit ("1 pass")
  const word = (aspect.words ?? [])[score - aspect.min];
  return word === undefined ? String(score) : `${score} ${word}`;
}

function plural(n, word) {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

// --- what the browser holds ------------------------------------------------------------------

function freshView(session) {
  return {
    session, data: null, items: new Map(), labels: new Map(), atServer: new Map(), queue: [], history: [],
    place: 0, current: null, shownAt: Infinity, since: 0, skipped: new Set(), undo: [], rated: new Map(),
    note: "", started: false, reasons: new Map(), asks: new Map(), timed: new Map(), leaving: null,
  };
}

function pending(item) {
  return tab.outbox.some((op) => op.item === item && op.op !== "skip");
}

function awaiting(view, item) {
  // a label without a reason (none given since) the server has not answered: a queue may ask for one
  return tab.outbox.some((op) => op.item === item && op.op === "label" && !op.reason
    && !reasonOf(view, item, op.aspect));
}

function reasonOf(view, item, aspect) {
  return (view.reasons.get(item) ?? {})[aspect] ?? "";
}

function setAsk(view, item, aspect, ask) {
  const asks = { ...(view.asks.get(item) ?? {}) };
  if (ask) asks[aspect] = ask;
  else delete asks[aspect];
  view.asks.set(item, asks);
}

function openAsk(view, item) {
  // the first aspect of the item whose label waits for a reason: {aspect, score, why}
  const asks = view.asks.get(item) ?? {};
  const aspect = view.data.aspects.find((a) => asks[a.name]);
  return aspect ? { aspect: aspect.name, ...asks[aspect.name] } : null;
}

function complete(view, item) {
  const given = view.labels.get(item) ?? {};
  return view.data.aspects.every((aspect) => given[aspect.name] !== undefined) && !openAsk(view, item);
}

function labeledCount(view) {
  // the items labeled as stored, and those whose changes are still on their way as the browser has them
  let count = view.data.done;
  for (const item of new Set(tab.outbox.filter((op) => op.op !== "skip").map((op) => op.item))) {
    if (view.items.has(item)) count += Number(complete(view, item)) - Number(view.atServer.get(item) ?? false);
  }
  return count;
}

function absorb(data) {
  // the server's answer: what it stored, and the items it chose
  if (!tab.view || tab.view.session !== data.session) { // another dataset, annotator, aspects or order
    if (tab.view) [tab.cleared, tab.held] = [tab.refused.length, false]; // the keys not taken named its items
    tab.view = freshView(data.session);
  }
  const view = tab.view;
  view.data = data;
  const answered = tab.outbox.filter((op) => op.seq <= data.acked);
  if (answered.length || !tab.outbox.length) tab.answeredAt = performance.now();
  tab.outbox = tab.outbox.filter((op) => op.seq > data.acked);
  for (const failure of data.failed) {
    if (!tab.failedSeen.has(failure.seq)) {
      tab.failedSeen.add(failure.seq);
      tab.failed.push(failure);
    }
  }
  for (const ask of data.asked ?? []) { // a label not stored for want of a reason: held, if still as given
    if (tab.askedSeen.has(ask.seq)) continue;
    tab.askedSeen.add(ask.seq);
    if ((view.labels.get(ask.item) ?? {})[ask.aspect] === ask.score && !reasonOf(view, ask.item, ask.aspect)) {
      setAsk(view, ask.item, ask.aspect, { score: ask.score, why: ask.why });
    }
  }
  for (const item of data.items) {
    view.items.set(item.id, item);
    view.atServer.set(item.id, item.complete);
    if (!pending(item.id)) {
      const held = Object.fromEntries(Object.entries(view.asks.get(item.id) ?? {}).map(([a, ask]) => [a, ask.score]));
      view.labels.set(item.id, { ...item.labels, ...held }); // a label asked for a reason stays on screen
      view.reasons.set(item.id, { ...item.reasons });
    }
  }
  for (const op of answered) {
    if (!pending(op.item) && view.items.has(op.item)) view.atServer.set(op.item, complete(view, op.item));
  }
  view.queue = data.queue;
  if (!view.started) {
    view.started = true;
    view.history = data.history.filter((id) => view.items.has(id));
    view.place = view.history.length;
  }
}

// --- to the server -----------------------------------------------------------------------------

function send() {
  tab.sentAt = performance.now();
  tab.send?.("outbox", tab.outbox.map((op) => ({ ...op, sent: tab.sentAt })));
}

function post(op) {
  const view = tab.view;
  if (!tab.outbox.length) tab.answeredAt = performance.now();
  tab.seq += 1;
  tab.outbox.push({ seq: tab.seq, dataset: view.data.dataset, annotator: view.data.annotator, ...op });
  send();
  return tab.seq;
}

// --- moving through the items -----------------------------------------------------------------

function following(view) {
  // the item seen after the one shown, else the first the server chose that is not labeled or skipped
  if (view.place + 1 < view.history.length) return view.history[view.place + 1];
  return view.queue.find((id) => view.items.has(id) && !complete(view, id) && !view.skipped.has(id)
    && !view.history.includes(id)) ?? null;
}

function goTo(view, item) {
  const at = view.history.indexOf(item);
  if (at >= 0) view.place = at;
  else if (item !== null) {
    view.history.push(item);
    view.place = view.history.length - 1;
  } else view.place = view.history.length;
  show(view, item);
}

function leave(view) {
  goTo(view, following(view));
}

function show(view, item) {
  view.current = item;
  view.leaving = null;
  view.shownAt = Infinity;
  view.since = 0;
  drawItem(view);
  if (item === null) return;
  // shown once painted: two frames on, the first has been drawn on screen
  requestAnimationFrame(() => requestAnimationFrame(() => {
    if (view.current !== item || tab.view !== view) return;
    view.shownAt = view.since = performance.now();
    // it appeared when first painted: drawn again as it was (the page run again) it was on screen all along
    if (tab.appeared?.item !== item) tab.appeared = { item, at: view.shownAt };
    // said to be shown (to a page's tests too) once its keys are taken: SOON after it appeared
    setTimeout(() => view.current === item && tab.view === view && tab.root?.setAttribute("data-shown", item),
      tab.appeared.at + SOON - view.shownAt);
  }));
}

function refuse(key, item, why) {
  tab.refused.push({ key, item, why });
  if (AHEAD.has(why)) tab.held = true;
  update();
}

function release(view) {
  // Esc: the keys held after one typed ahead are taken again (the notice stays until dismissed)
  if (!tab.held) return;
  tab.held = false;
  view.note = "Keys are taken again: each goes to the item on screen.";
}

function activeAspect(view, item) {
  const given = view.labels.get(item) ?? {};
  const open = view.data.aspects.find((aspect) => given[aspect.name] === undefined);
  if (open) return open;
  const rated = view.rated.get(item);
  return view.data.aspects.find((aspect) => aspect.name === rated) ?? view.data.aspects.at(-1);
}

function rate(view, aspect, score, at) {
  const item = view.current;
  const given = { ...(view.labels.get(item) ?? {}) };
  const previous = given[aspect.name] ?? null;
  given[aspect.name] = score;
  view.labels.set(item, given);
  view.rated.set(item, aspect.name);
  view.leaving = null;
  const seconds = Math.round(Math.max(0, (at - (view.since || at)) / 1000) * 100) / 100;
  view.since = at;
  view.timed.set(`${item}\t${aspect.name}`, { seconds, at });
  const reason = reasonOf(view, item, aspect.name);
  const why = reason ? "" : (aspect.ask ?? {})[score];
  setAsk(view, item, aspect.name, why ? { score, why } : null);
  const seq = post({ op: "label", item, aspect: aspect.name, score, seconds, reason });
  view.undo.push({ seqs: [seq], item, aspect: aspect.name, previous, previousReason: reason });
  view.note = previous === null ? `Labeled ${aspect.name} ${inWords(aspect, score)}.`
    : `Changed ${aspect.name} from ${inWords(aspect, previous)} to ${inWords(aspect, score)}.`;
}

function askLine(why) {
  return `${why}. Tab reaches the reason box; Enter there saves the label with it.`;
}

function giveReason(view, aspect, text, at) {
  // Enter in the reason box: the label saved again with its reason; whether it may go on
  const item = view.current;
  const score = (view.labels.get(item) ?? {})[aspect.name];
  const ask = (view.asks.get(item) ?? {})[aspect.name];
  if (score === undefined) {
    view.note = `Give ${aspect.name} a score first (a digit), then its reason.`;
    return false;
  }
  if (!text && ask) {
    view.note = "Type the reason first: this label needs one.";
    return false;
  }
  const previousReason = reasonOf(view, item, aspect.name);
  if (text === previousReason) return true;
  view.reasons.set(item, { ...(view.reasons.get(item) ?? {}), [aspect.name]: text });
  setAsk(view, item, aspect.name, null);
  const timed = view.timed.get(`${item}\t${aspect.name}`); // the label's seconds and the reason's typing
  const seconds = timed ? Math.round((timed.seconds + Math.max(0, (at - timed.at) / 1000)) * 100) / 100 : null;
  if (timed) view.timed.set(`${item}\t${aspect.name}`, { seconds, at });
  view.since = at;
  const seq = post({ op: "label", item, aspect: aspect.name, score, seconds, reason: text });
  const last = view.undo.at(-1); // u takes back the label and its reason together
  if (last && last.item === item && last.aspect === aspect.name) last.seqs.push(seq);
  else view.undo.push({ seqs: [seq], item, aspect: aspect.name, previous: score, previousReason });
  view.note = text ? `Saved ${aspect.name} ${score} with your reason.` : `Removed the reason for ${aspect.name}.`;
  return true;
}

function reasonKey(view, item, aspect, event) {
  // a key in a reason box: Enter saves it with the label, Escape goes back to the keys (the text kept)
  const box = event.currentTarget;
  if (event.key === "Escape") box.blur();
  if (event.key !== "Enter" || event.isComposing || view.current !== item) return;
  event.preventDefault();
  if (giveReason(view, aspect, box.value.trim(), event.timeStamp)) {
    box.blur();
    if (complete(view, item)) goOn(view, "Enter");
  }
  update();
}

function focusReason(view) {
  const item = view.current;
  const asked = openAsk(view, item);
  const name = asked?.aspect ?? view.rated.get(item) ?? activeAspect(view, item).name;
  const box = [...tab.root.querySelectorAll("[data-label-reason]")].find((b) => b.dataset.labelReason === name);
  if (!box) return;
  box.focus();
  box.setSelectionRange(box.value.length, box.value.length);
}

function settle(view) {
  // Enter pressed on a label the server had not answered yet, in a queue that may ask for a reason
  if (view.leaving === null) return;
  if (view.leaving !== view.current) view.leaving = null;
  else if (openAsk(view, view.current)) {
    view.leaving = null;
    view.note = "The next item waits for this label's reason (below).";
  } else if (!awaiting(view, view.current)) {
    view.note = "";
    leave(view);
  }
}

function goOn(view, key) {
  if (openAsk(view, view.current)) {
    view.note = "The next item waits for this label's reason (below).";
    return;
  }
  if (view.data.verdict && complete(view, view.current) && awaiting(view, view.current)) {
    view.leaving = view.current;
    view.note = "Checking with the server whether this label needs a reason… (a reason typed now goes on at once: "
      + "Tab)";
    return;
  }
  if (!complete(view, view.current)) {
    const missing = view.data.aspects.filter((a) => (view.labels.get(view.current) ?? {})[a.name] === undefined);
    view.note = `No label of ${missing.map((a) => a.name).join(", ")} for this item yet: a digit gives it, `
      + "s skips the item.";
    refuse(key, view.current, "unlabeled");
    return;
  }
  view.note = "";
  leave(view);
}

function back(view) {
  const asked = view.current === null ? null : openAsk(view, view.current);
  if (asked) { // the label on screen is not stored without its reason: leaving would show it as given
    view.note = `${asked.aspect} ${asked.score} is not saved until its reason is given (Tab); u takes it back.`;
  } else if (!view.history.length) view.note = "Nothing labeled before this item yet.";
  else if (view.place === 0) view.note = "This is the first item you saw.";
  else {
    view.note = "";
    goTo(view, view.history[view.place - 1]);
  }
}

function skip(view) {
  const item = view.current;
  view.skipped.add(item);
  post({ op: "skip", item });
  leave(view);
  view.note = "Skipped.";
}

function undo(view) {
  const last = view.undo.pop();
  if (!last) {
    view.note = "Nothing to undo in this session.";
    return;
  }
  const given = { ...(view.labels.get(last.item) ?? {}) };
  if (last.previous === null) delete given[last.aspect];
  else given[last.aspect] = last.previous;
  view.labels.set(last.item, given);
  view.reasons.set(last.item, { ...(view.reasons.get(last.item) ?? {}), [last.aspect]: last.previousReason });
  setAsk(view, last.item, last.aspect, null); // what it puts back was stored (or nothing)
  for (const seq of [...last.seqs].reverse()) {
    post({ op: "undo", item: last.item, aspect: last.aspect, of: seq, previous: last.previous });
  }
  if (view.current !== last.item) goTo(view, last.item);
  const aspect = view.data.aspects.find((a) => a.name === last.aspect);
  const now = last.previous === null ? "is unlabeled" : `is ${inWords(aspect, last.previous)} again`;
  view.note = `Undone: ${last.aspect} of this item ${now}.`;
}

function pressed(event) {
  const key = /^[0-9]$/.test(event.key) ? event.key : KEYS[event.key];
  const view = tab.view;
  if (!key || !view?.data || event.ctrlKey || event.metaKey || event.altKey || typing(event.target)) return;
  event.preventDefault(); // Enter on a focused button would click it as well
  if (event.repeat) return; // a key held down labels once
  const item = view.current;
  const onScreen = item !== null && event.timeStamp >= view.shownAt;
  if (key === "Esc") release(view);
  else if (key === "←") back(view);
  else if (key === "u") undo(view);
  else if (tab.held && key !== "Tab") {
    refuse(key, item, "held");
    return;
  } else if (!onScreen) {
    refuse(key, item, item === null ? "none" : "early");
    return;
  } else if ((/^[0-9]$/.test(key) || key === "s") && event.timeStamp < tab.appeared.at + SOON) {
    refuse(key, item, "soon");
    return;
  } else if (key === "Tab") focusReason(view);
  else if (/^[0-9]$/.test(key)) {
    const aspect = activeAspect(view, item);
    const value = Number(key);
    if (value < aspect.min || value > aspect.max) {
      view.note = `${value} is not on the scale of ${aspect.name} (${aspect.min}-${aspect.max}): nothing was saved.`;
      refuse(key, item, "scale");
      return;
    }
    rate(view, aspect, value, event.timeStamp);
  } else if (key === "s") skip(view);
  else goOn(view, key);
  update();
}

// --- drawing ------------------------------------------------------------------------------------

function skeleton(parent) {
  // one unit on the page: a mount's that Streamlit has not removed yet would show beside the new one
  for (const old of document.querySelectorAll(".gl-unit")) old.remove(); // Streamlit's style element stays
  const root = element("div", "gl-unit");
  root.dataset.testid = "label-unit";
  // what answers a key (the note) and the item's system line go beside the buttons (`drawItem`): above the item,
  // they pushed it down at each label, and the response out of view on a laptop's screen
  tab.feedback = element("div", "gl-feedback");
  for (const part of ["notice", "failed", "status", "line", "note", "system"]) {
    const made = element("div", `gl-${part}`);
    made.dataset.labelPart = part;
    (["note", "system"].includes(part) ? tab.feedback : root).appendChild(made);
  }
  root.appendChild(element("div", "gl-body"));
  parent.appendChild(root);
  return root;
}

function part(name) {
  const selector = `[data-label-part="${name}"]`;
  return tab.root.querySelector(selector) ?? tab.feedback.querySelector(selector); // the feedback: between items
}

function button(text, onClick, primary = false) {
  const made = element("button", primary ? "gl-button gl-primary" : "gl-button", text);
  made.type = "button";
  made.addEventListener("click", (event) => {
    event.currentTarget.blur(); // Enter goes on, not to this button
    onClick(event);
    update();
  });
  return made;
}

function boxed(className, text) {
  const box = element("div", `gl-box ${className}`);
  box.appendChild(element("div", "", text));
  return box;
}

function drawText(item) {
  const column = element("div", "gl-text");
  if (item.earlier.length) {
    const said = `${plural(item.earlier.length, "earlier turn")} `
      + "(the box opens on the last ones: scroll up for the first):";
    column.appendChild(element("div", "gl-caption", said));
    const box = element("div", "gl-box gl-earlier");
    for (const turn of item.earlier) box.appendChild(element("div", "gl-turn", turn));
    column.appendChild(box);
    requestAnimationFrame(() => { box.scrollTop = box.scrollHeight; });
  }
  if (item.recent.length) {
    column.appendChild(element("div", "gl-caption", "The last turns:"));
    for (const [speaker, text] of item.recent) {
      const turn = element("div", "gl-turn");
      turn.appendChild(element("strong", "", `${speaker || "turn"}: `));
      turn.appendChild(document.createTextNode(text));
      column.appendChild(turn);
    }
  }
  if (item.response) {
    column.appendChild(element("div", "gl-caption", item.captions.response));
    const box = boxed("gl-response", item.response);
    box.firstChild.dataset.labelPart = "response";
    column.appendChild(box);
  }
  if (item.grounding) {
    column.appendChild(element("div", "gl-caption", item.captions.grounding));
    column.appendChild(boxed(item.grounding.length > 400 ? "gl-grounding gl-long" : "gl-grounding", item.grounding));
  }
  return column;
}

function drawItem(view) {
  const body = tab.root.querySelector(".gl-body");
  body.replaceChildren();
  tab.root.removeAttribute("data-shown");
  const item = view.current === null ? null : view.items.get(view.current);
  if (item) {
    body.appendChild(drawText(item));
    const side = element("div", "gl-side");
    side.appendChild(element("div", "gl-aspects"));
    const nav = element("div", "gl-nav");
    nav.append(button("Back ←", () => back(view)), button("Skip (s)", () => skip(view)),
      button("Undo (u)", () => undo(view)), button("Next (Enter or →)", () => goOn(view, "Next")));
    nav.lastChild.classList.add("gl-next");
    side.append(nav, tab.feedback);
    body.appendChild(side);
  } else {
    if (view.history.length) body.appendChild(button("Back ←", () => back(view)));
    body.appendChild(tab.feedback);
  }
}

function aspectBlock(view, item, aspect) {
  // an aspect's title, scale, reason box (kept while the item is shown: typing is never cut), and lines
  const block = element("div", "gl-block");
  const reason = element("input", "gl-reason");
  reason.type = "text";
  reason.maxLength = view.data.reasonChars ?? 500;
  reason.placeholder = "Reason (Tab; Enter saves)";
  reason.dataset.labelReason = aspect.name;
  reason.setAttribute("aria-label", `Reason for ${aspect.name}`);
  reason.addEventListener("keydown", (event) => reasonKey(view, item.id, aspect, event));
  block.append(element("div", "gl-aspect"), element("div", "gl-scale"), reason, element("div", "gl-why"),
    element("div", "gl-caption gl-shown"));
  return block;
}

function drawAspects(view, item) {
  // updated in place: a button is drawn again only when what it shows changed (not replaced under a click)
  const box = tab.root.querySelector(".gl-aspects");
  if (!box) return;
  if (box.dataset.item !== item.id) {
    box.dataset.item = item.id;
    box.replaceChildren(...view.data.aspects.map((aspect) => aspectBlock(view, item, aspect)));
  }
  const given = view.labels.get(item.id) ?? {};
  const asks = view.asks.get(item.id) ?? {};
  const active = activeAspect(view, item.id);
  view.data.aspects.forEach((aspect, index) => {
    const [title, scale, reason, why, shown] = box.children[index].children;
    const keys = aspect === active ? " ← the keys rate this" : "";
    const range = aspect.words ? aspect.words.join("/") : `${aspect.min}-${aspect.max}`;  // labels by their words
    title.replaceChildren(element("strong", "", aspect.name), document.createTextNode(` (${range})${keys}`));
    const drawn = String(given[aspect.name] ?? "");
    if (scale.dataset.drawn !== drawn) {
      scale.dataset.drawn = drawn;
      scale.replaceChildren();
      for (let value = aspect.min; value <= aspect.max; value += 1) {
        scale.appendChild(button(inWords(aspect, value), () => rate(view, aspect, value, performance.now()),
          given[aspect.name] === value));
      }
    }
    if (document.activeElement !== reason) reason.value = reasonOf(view, item.id, aspect.name);
    const ask = asks[aspect.name];
    reason.classList.toggle("gl-asked", Boolean(ask));
    why.textContent = ask ? askLine(ask.why) : "";
    const labeled = given[aspect.name] !== undefined;
    const said = labeled || !view.data.blind
      ? [labeled ? `${view.data.annotator} ${inWords(aspect, given[aspect.name])}` : "not labeled yet",
        item.shown[aspect.name] ?? ""]
      : [];
    shown.textContent = said.filter(Boolean).join(" · ");
  });
  tab.root.querySelector(".gl-next")?.classList.toggle("gl-primary", complete(view, item.id));
}

function refusals() {
  // the keys not taken in this session, counted, with why and the latest ones, until dismissed
  const total = tab.refused.length;
  if (total <= tab.cleared) return "";
  const counts = new Map();
  for (const { why } of tab.refused) counts.set(why, (counts.get(why) ?? 0) + 1);
  const reasons = counts.size === 1 ? REFUSED[[...counts.keys()][0]][0]
    : [...counts].map(([why, n]) => `${n} ${REFUSED[why][0]}`).join("; ");
  const runs = []; // the latest keys, a run per item and reason
  for (const { key, item, why } of tab.refused.slice(Math.max(tab.cleared, total - LATEST))) {
    const last = runs.at(-1);
    if (last && last.item === item && last.why === why) last.keys.push(key);
    else runs.push({ item, why, keys: [key] });
  }
  const latest = runs.map((run) => `${run.keys.join(", ")} on ${run.item ? `item ${run.item}` : "no item"} `
    + `(${REFUSED[run.why][1]})`).join("; ");
  const held = tab.held ? " Keys are held, as one was typed ahead of its item: look at the item on screen, then "
    + "press Esc to label again." : "";
  return `${plural(total, "key")} not taken so far in this session: ${reasons}. The latest: ${latest}. `
    + `A key goes to the item on screen as it is pressed.${held}`;
}

function status() {
  // what is on its way to the store, and whether the server answers
  const labels = tab.outbox.filter((op) => op.op === "label").length;
  const others = tab.outbox.length - labels;
  if (!tab.outbox.length) return ["", ""];
  const moves = others === 1 ? "undo or skip" : "undos or skips";
  const what = [labels ? plural(labels, "label") : "", others ? `${others} ${moves}` : ""]
    .filter(Boolean).join(" and ");
  const silent = performance.now() - tab.answeredAt;
  if (silent < LOST) return ["gl-saving", `Saving ${what}…`];
  return ["gl-lost", `${what} not saved yet: the server has not answered for ${Math.round(silent / 1000)} s (is the `
    + "connection lost?). They are kept in this tab and sent again every few seconds until the store has them: "
    + "keep the tab open."];
}

function notice(box, text, onDismiss) {
  box.replaceChildren();
  box.hidden = !text;
  if (!text) return;
  box.appendChild(element("span", "", text));
  box.appendChild(button("Dismiss", onDismiss));
}

function drawStatus() {
  const [kind, said] = status();
  part("status").className = `gl-status ${kind}`;
  part("status").textContent = said;
}

function update() {
  const view = tab.view;
  if (!tab.root || !view?.data) return;
  notice(part("notice"), refusals(), () => {
    tab.cleared = tab.refused.length;
    tab.held = false;
  });
  const failed = tab.failed.slice(tab.failedCleared);
  notice(part("failed"), failed.length ? `The store did not take ${plural(failed.length, "change")}: `
    + failed.map((f) => `item ${f.item}: ${f.why}`).join("; ") : "", () => { tab.failedCleared = tab.failed.length; });
  drawStatus();
  const line = part("line");
  const item = view.current === null ? null : view.items.get(view.current);
  if (item) {
    line.textContent = `item ${item.id} · ${item.place} of ${view.data.total} in this order · `
      + `${labeledCount(view)} labeled · group ${item.group || "–"}`;
    // its system's mean as people would score it: blind, once the item is labeled (it names the system and
    // reads people's and the judge's scores)
    part("system").textContent = !view.data.blind || complete(view, item.id) ? item.system : "";
    drawAspects(view, item);
  } else {
    const done = !view.queue.length && !tab.outbox.length;
    line.textContent = done ? "" : "The next item is on its way from the server…";
    part("system").textContent = "";
  }
  line.dataset.labelKeys = tab.listener ? "ready" : "";
  part("note").textContent = view.note;
}

// --- the component ------------------------------------------------------------------------------

export default function ({ data, setStateValue, parentElement }) {
  tab.send = setStateValue;
  tab.owner = parentElement; // the newest mount: it owns the keys' listener and the timer
  const remounted = tab.root?.parentNode !== parentElement;
  if (remounted) tab.root = skeleton(parentElement);
  const before = tab.view;
  absorb(data);
  const view = tab.view;
  settle(view);
  if (view !== before || remounted) show(view, view.current);
  if (view.current === null && view.place >= view.history.length) {
    const next = following(view);
    if (next !== null) goTo(view, next);
  }
  if (!tab.listener) {
    tab.listener = pressed;
    document.addEventListener("keydown", tab.listener);
  }
  if (!tab.timer) {
    tab.timer = setInterval(() => {
      const now = performance.now();
      if (tab.outbox.length && now - tab.sentAt > RESEND && now - tab.answeredAt > RESEND) send();
      if (tab.root && tab.view?.data) drawStatus();
    }, 1000);
  }
  if (remounted && tab.outbox.length) send(); // back from another page: what the server has not answered
  update();
  return () => {
    // a mount replaced by a newer one (its element drawn anew after the first run of a page) leaves the
    // newer one's listener: once, it removed it, and no key was heard on an item shown as ready
    if (tab.owner !== parentElement) return;
    document.removeEventListener("keydown", tab.listener);
    clearInterval(tab.timer);
    tab.listener = tab.timer = null;
  };
}

window.addEventListener("beforeunload", (event) => {
  if (window.gevalLabelUnit?.outbox.length) event.preventDefault(); // changes not saved yet: the browser asks
});
