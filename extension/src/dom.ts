/**
 * DOM helpers.  All text reaches the page through `textContent` or
 * attributes set with `setAttribute`; nothing here parses HTML.
 */

/** Create `<tag class="className">text</tag>`; text is inserted as text. */
export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  className?: string,
  text?: string
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (className) {
    node.className = className;
  }
  if (text !== undefined) {
    node.textContent = text;
  }
  return node;
}

/** Create a `<button type="button">` with a label and a tooltip title. */
export function button(className: string, label: string, title: string): HTMLButtonElement {
  const node = el('button', `wl-button ${className}`, label);
  node.type = 'button';
  node.title = title;
  node.setAttribute('aria-label', title);
  return node;
}

/** Compact count: 950, 4.1k, 12M. */
export function compactNumber(value: number): string {
  const abs = Math.abs(value);
  if (abs >= 1e6) {
    return `${(value / 1e6).toFixed(abs >= 1e7 ? 0 : 1)}M`;
  }
  if (abs >= 1e3) {
    return `${(value / 1e3).toFixed(abs >= 1e4 ? 0 : 1)}k`;
  }
  return String(Math.round(value * 100) / 100);
}

/**
 * Scroll `container` (a scrollable pane body) so that `row` is in view,
 * a third of the way down, without scrolling the page around it.
 * `container` must be positioned (the rows' offsetParent).
 */
export function scrollRowIntoView(container: HTMLElement, row: HTMLElement): void {
  const top = row.offsetTop;
  const visibleTop = container.scrollTop;
  const visibleBottom = visibleTop + container.clientHeight;
  if (top < visibleTop || top + row.offsetHeight > visibleBottom) {
    container.scrollTop = Math.max(0, top - container.clientHeight / 3);
  }
}
