// trapTab keeps Tab and Shift+Tab inside container (an open drawer): from
// its last focusable element Tab goes to its first, and back. Call it
// from the container's onKeyDown while the drawer is open.
const focusable = 'a[href], button:not([disabled]), input:not([disabled]), textarea:not([disabled]), select:not([disabled]), [tabindex]:not([tabindex="-1"])';

export function trapTab(e, container) {
  if (e.key !== "Tab" || !container) return;
  const items = [...container.querySelectorAll(focusable)].filter((el) => el.getClientRects().length > 0);
  if (items.length === 0) return;
  const first = items[0];
  const last = items[items.length - 1];
  const active = document.activeElement;
  if (e.shiftKey && (active === first || !container.contains(active))) {
    e.preventDefault();
    last.focus();
  } else if (!e.shiftKey && (active === last || !container.contains(active))) {
    e.preventDefault();
    first.focus();
  }
}
