// Which laid-out boxes of a page are drawn over each other, for the layout tests that run Chromium.

/**
 * Runs in the page (`page.evaluate(overlapsOf, selector)`): every pair of the elements `selector`
 * matches, neither inside the other, whose boxes intersect by more than a pixel each way, named by
 * tag, index and the section (or class) they are in.
 */
export function overlapsOf(selector: string): string[] {
  const boxes = Array.from(document.querySelectorAll(selector)).map((el, i) => ({
    el,
    name: `${el.tagName.toLowerCase()}#${i} ${(el.closest('section')?.id ?? el.className) || el.id}`,
    r: el.getBoundingClientRect(),
  }));
  const overlaps: string[] = [];
  for (let i = 0; i < boxes.length; i++)
    for (let j = i + 1; j < boxes.length; j++) {
      const a = boxes[i]!;
      const b = boxes[j]!;
      if (a.el.contains(b.el) || b.el.contains(a.el)) continue;
      const w = Math.min(a.r.right, b.r.right) - Math.max(a.r.left, b.r.left);
      const h = Math.min(a.r.bottom, b.r.bottom) - Math.max(a.r.top, b.r.top);
      if (w > 1 && h > 1) overlaps.push(`${a.name} × ${b.name}`);
    }
  return overlaps;
}
