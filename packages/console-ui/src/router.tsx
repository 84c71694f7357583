import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';

/*
 * Routing for a handful of pages: the path is the state, pushState changes it. Hand-written (30 lines) rather
 * than a router package because the console needs only exact paths, one ID parameter and links.
 */
const NAVIGATE = 'console:navigate';

export function navigate(to: string, replace = false): void {
  if (replace) history.replaceState(null, '', to);
  else history.pushState(null, '', to);
  window.dispatchEvent(new Event(NAVIGATE));
}

export function useLocation(): { path: string; search: URLSearchParams } {
  const read = () => ({
    path: location.pathname.replace(/\/+$/, '') || '/',
    search: new URLSearchParams(location.search),
  });
  const [loc, setLoc] = useState(read);
  useEffect(() => {
    const update = () => setLoc(read());
    window.addEventListener('popstate', update);
    window.addEventListener(NAVIGATE, update);
    return () => {
      window.removeEventListener('popstate', update);
      window.removeEventListener(NAVIGATE, update);
    };
  }, []);
  return loc;
}

export function Link({
  href,
  children,
  ...rest
}: {
  href: string;
  children: ComponentChildren;
  class?: string;
  'aria-current'?: 'page';
}) {
  const onClick = (e: MouseEvent) => {
    if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    navigate(href);
  };
  return (
    <a {...rest} href={href} onClick={onClick}>
      {children}
    </a>
  );
}
