// The dashboard (README, "Dashboard"): static pages under {base_url}/ui/ that read the same free
// API a client does, with the key the person types in (kept in the tab's sessionStorage). The
// files are read once at start from ui/ and the chart library's dist (uPlot, from node_modules: no
// build step); a request names one of them or gets a 404, so no request path ever reaches the
// file system. Every page answer carries a Content-Security-Policy without inline script.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import Router, { type RouterContext } from '@koa/router';
import { HttpError } from '../http/http-error.ts';

const UI_DIR = path.resolve(import.meta.dirname, '..', '..', 'ui');
const require = createRequire(import.meta.url);
/** Files of the chart library, served under ui/vendor/. */
const VENDOR: Record<string, string> = {
  'uPlot.esm.js': require.resolve('uplot/dist/uPlot.esm.js'),
  'uPlot.min.css': require.resolve('uplot/dist/uPlot.min.css'),
};

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
};

/**
 * No inline script or style element, nothing from elsewhere; images from our thumbnails (fetched
 * with the key, shown as blob: URLs); no framing; forms post nowhere.
 */
const UI_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' blob: data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** With X-Content-Type-Options: nosniff, which every answer of the app carries (app.ts). */
const UI_HEADERS: Record<string, string> = {
  'Content-Security-Policy': UI_CSP,
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
  'Cross-Origin-Opener-Policy': 'same-origin',
};

interface Asset {
  body: Buffer;
  type: string;
  etag: string;
}

function asset(file: string): Asset | null {
  const type = TYPES[path.extname(file)];
  if (!type) return null;
  return withEtag(fs.readFileSync(file), type);
}

/** The pages: each is ui/page.html with its title and its script (ui/js/<script>.js). */
export const UI_PAGES: Record<string, { title: string; script: string }> = {
  'index.html': { title: 'Narratives', script: 'narratives' },
  'themes.html': { title: 'Themes', script: 'themes' },
  'narrative.html': { title: 'Narrative', script: 'narrative' },
  'patterns.html': { title: 'Patterns', script: 'patterns' },
  'search.html': { title: 'Search', script: 'search' },
  'alerts.html': { title: 'Alerts', script: 'alerts' },
  'account.html': { title: 'Account', script: 'account' },
  'health.html': { title: 'Health', script: 'health' },
};

function withEtag(body: Buffer, type: string): Asset {
  return { body, type, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"` };
}

/** Every file the dashboard serves, by its path under ui/. */
function loadUiAssets(): Map<string, Asset> {
  const out = new Map<string, Asset>();
  for (const rel of fs.readdirSync(UI_DIR, { recursive: true }) as string[]) {
    const a = fs.statSync(path.join(UI_DIR, rel)).isFile() ? asset(path.join(UI_DIR, rel)) : null;
    if (a && rel !== 'page.html') out.set(rel.split(path.sep).join('/'), a);
  }
  const shell = fs.readFileSync(path.join(UI_DIR, 'page.html'), 'utf8');
  for (const [name, p] of Object.entries(UI_PAGES))
    out.set(name, withEtag(Buffer.from(shell.replace('{{title}}', p.title).replace('{{script}}', p.script)), TYPES['.html']!));
  for (const [name, file] of Object.entries(VENDOR)) {
    const a = asset(file);
    if (a) out.set(`vendor/${name}`, a);
  }
  return out;
}

/** The routes, for a router mounted at `prefix` (SERVICE_PREFIX). */
export function uiRouter(prefix: string): Router {
  const assets = loadUiAssets();
  const r = new Router();
  const serve = (ctx: RouterContext) => {
    // {base_url}/ui (no slash) to ui/, so the pages' relative links resolve.
    if (ctx.path === `${prefix}/ui`) return ctx.redirect(`${prefix}/ui/`);
    const name = ctx.path.slice(`${prefix}/ui/`.length) || 'index.html';
    const a = assets.get(name);
    if (!a) throw new HttpError(404, { error: `no dashboard file ${name}` });
    ctx.set(UI_HEADERS);
    ctx.set('Cache-Control', 'no-cache');
    ctx.set('ETag', a.etag);
    if (ctx.get('If-None-Match') === a.etag) {
      ctx.status = 304;
      return;
    }
    ctx.type = a.type;
    ctx.body = a.body;
  };
  r.get('/ui', serve);
  r.get('/ui/*file', serve);
  return r;
}
