// The app: the navigation, the time bar every page shares, and the router
// from a UI path (/ui/jobs/web@default) to its page module.
import { html, render, useState, useEffect, api, navigate, href, ErrorBox } from './ui.js';
import { TimeBar } from './timebar.js';
import { routes } from './routes.js';

/** Finds the page for a path: its loader and the path's parameters. */
export function route(path) {
  for (const [pattern, load] of routes) {
    const m = pattern.exec(path);
    if (m) return { load, params: (m.groups ? Object.fromEntries(Object.entries(m.groups).map(([k, v]) => [k, v && decodeURIComponent(v)])) : {}) };
  }
  return null;
}

function currentPath() {
  const p = location.pathname.replace(/^\/ui/, '') || '/';
  return p === '/' ? '/jobs' : p.replace(/\/$/, '');
}

// The slider's index lives in the URL: a link reproduces the view.
function syncAtFromURL() {
  const n = Number(new URLSearchParams(location.search).get('at_index') || 0);
  api.setAtIndex(Number.isFinite(n) && n > 0 ? Math.floor(n) : 0);
}

const nav = [
  ['Jobs', '/jobs'], ['Allocations', '/allocations'], ['Clients', '/clients'], ['Evaluations', '/evaluations'],
  ['Deployments', '/deployments'], ['Timeline', '/timeline'], ['Namespaces', '/namespaces'],
  ['Variables', '/variables'], ['Volumes', '/csi/volumes'], ['Launcher', '/launcher'],
  ['Operator', '/operator'], ['ACL tokens', '/settings/tokens'],
];

function App() {
  const [path, setPath] = useState(currentPath());
  const [, setSearch] = useState(location.search);
  useEffect(() => {
    const onPop = () => { syncAtFromURL(); setPath(currentPath()); setSearch(location.search); };
    addEventListener('popstate', onPop);
    return () => removeEventListener('popstate', onPop);
  }, []);
  // The page shown: loaded with its module the first time its path is.
  const [shown, setShown] = useState(null);
  useEffect(() => {
    const found = route(path);
    if (!found) { setShown({ path, Page: NotFound, params: {} }); return undefined; }
    let stop = false;
    found.load()
      .then((Page) => { if (!stop) setShown({ path, Page, params: found.params }); })
      .catch((e) => { if (!stop) setShown({ path, Page: () => html`<${ErrorBox} error=${e} />`, params: {} }); });
    return () => { stop = true; };
  }, [path]);
  const Page = shown ? shown.Page : Loading;
  useEffect(() => { document.title = (Page.title ? Page.title + ' · ' : '') + 'ordo'; }, [Page]);
  return html`
    <a class="skip" href="#main">Skip to content</a>
    <header class="top">
      <a class="brand" href="/ui/jobs" aria-label="ordo home">ordo</a>
      <nav aria-label="sections"><ul>
        ${nav.map(([name, to]) => html`<li><a href=${href(to)}
          aria-current=${path.startsWith(to) ? 'page' : undefined}>${name}</a></li>`)}
      </ul></nav>
    </header>
    <${TimeBar} />
    <main id="main" tabindex="-1">
      <${Page} ...${shown ? shown.params : {}} key=${shown ? shown.path : ''} />
    </main>`;
}

function Loading() {
  return html`<p class="loading" aria-live="polite">Loading…</p>`;
}

function NotFound() {
  return html`<h1>Not found</h1><p>No page at ${location.pathname}.</p>`;
}

// Links inside the UI move the app without a reload.
document.addEventListener('click', (e) => {
  const a = e.target.closest && e.target.closest('a[href^="/ui"]');
  if (!a || e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || a.target) return;
  e.preventDefault();
  navigate(a.getAttribute('href'));
});

syncAtFromURL();
const root = document.getElementById('app');
root.textContent = ''; // the page's "Loading" line
render(html`<${App} />`, root);
