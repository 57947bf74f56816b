// The Label page's keys (studio/labeling.py): every key is logged in the order typed, with the item
// shown as it was pressed (the line this component draws), and the whole log not yet taken is sent
// as the component's state. Streamlit keeps only the newest state of a component when reruns pile
// up, and that state holds every key still to take: none is lost or reordered, whatever the load.
// Each key also carries the count of keys not taken that the page said as it was pressed: a label
// typed after the page said them puts them behind the user, one typed blind ahead of it does not.
const KEYS = { Enter: "Enter", ArrowRight: "→", ArrowLeft: "←", s: "s", S: "s", u: "u", U: "u" };

function typing(target) {
  // keys typed into a text box, a menu or a number field are theirs, not ratings
  return target instanceof HTMLElement
    && (target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName));
}

export default function ({ data, setStateValue, parentElement }) {
  const keys = (window.gevalLabelKeys ??= { seq: 0, log: [] });
  keys.item = data.item;
  keys.seen = data.seen; // the count of keys not taken the page says now: a label typed after it puts them behind
  keys.send = setStateValue;
  keys.log = keys.log.filter((entry) => entry.seq > data.done);
  keys.seq = Math.max(keys.seq, data.done);

  let line = parentElement.querySelector(".geval-item-line");
  if (!line) {
    line = document.createElement("div");
    line.className = "geval-item-line";
    parentElement.appendChild(line);
  }
  line.textContent = data.line;
  line.dataset.labelKeys = "ready";

  if (!keys.listener) {
    keys.listener = (event) => {
      const key = /^[0-9]$/.test(event.key) ? event.key : KEYS[event.key];
      if (!key || event.ctrlKey || event.metaKey || event.altKey || typing(event.target)) return;
      event.preventDefault(); // Enter on a focused button would click it as well
      keys.seq += 1;
      keys.log.push({ seq: keys.seq, key, item: keys.item, seen: keys.seen });
      keys.send("log", [...keys.log]);
    };
    document.addEventListener("keydown", keys.listener);
  }
  return () => {
    document.removeEventListener("keydown", keys.listener);
    keys.listener = null;
  };
}
