// The dashboard's page shell: one stylesheet inline (the pages' CSP allows inline styles and no
// script), a header with the account and mode the person looks at and the forms that switch
// them, and the small pieces every page uses. Laid out for a phone first; wide tables scroll
// inside their own focusable region.
import { escapeHtml } from '../html.ts';
import { DASHBOARD_PATH, type Viewer } from './session.ts';

const STYLE = `
*{box-sizing:border-box}
html{-webkit-text-size-adjust:100%}
body{margin:0;background:#f3f4f6;color:#111827;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
a{color:#3730a3}
a:focus-visible,button:focus-visible,input:focus-visible,select:focus-visible,[tabindex]:focus-visible{outline:3px solid #6366f1;outline-offset:2px}
header.top{background:#fff;border-bottom:1px solid #e5e7eb}
.top .inner{max-width:80rem;margin:0 auto;padding:.75rem 1rem;display:flex;flex-wrap:wrap;gap:.75rem 1.25rem;align-items:center}
.brand{font-weight:700;color:#3730a3;text-decoration:none;margin-right:auto}
.top form{margin:0;display:flex;gap:.5rem;align-items:center}
.mode{display:inline-block;font-size:.8125rem;font-weight:700;border-radius:999px;padding:.125rem .625rem}
.mode.test{background:#fef3c7;color:#78350f}.mode.live{background:#d1fae5;color:#064e3b}
main{max-width:80rem;margin:0 auto;padding:1rem}
main.narrow{max-width:28rem;margin-top:min(8vh,3rem)}
.card{background:#fff;border-radius:12px;padding:1.25rem;box-shadow:0 1px 3px rgba(0,0,0,.08);margin-bottom:1rem;min-width:0}
h1{font-size:1.5rem;line-height:1.3;margin:.25rem 0 .75rem;overflow-wrap:anywhere}
h2{font-size:1.1875rem;margin:0 0 .75rem}
h3{font-size:1rem;margin:1rem 0 .5rem}
p{margin:.5rem 0}
.muted{color:#4b5563}
small.muted{font-size:.875rem}
label{display:block;font-weight:600;margin:1rem 0 .25rem}
input[type=email],input[type=password],input[type=text],select{font:inherit;padding:.5rem .75rem;border:1px solid #6b7280;border-radius:8px;background:#fff;color:#111827}
main.narrow input{width:100%}
button{font:inherit;font-weight:600;border-radius:8px;padding:.5rem 1rem;border:1px solid transparent;cursor:pointer}
.primary{background:#4338ca;color:#fff}.primary:hover{background:#3730a3}
.secondary{background:#fff;color:#111827;border-color:#6b7280}.secondary:hover{background:#f9fafb}
main.narrow .primary{width:100%;margin-top:1.5rem;padding:.7rem 1rem}
.alert{background:#fef2f2;border:1px solid #fca5a5;color:#991b1b;border-radius:8px;padding:.625rem .75rem;margin:1rem 0}
.notice{background:#ecfdf5;border:1px solid #6ee7b7;color:#065f46;border-radius:8px;padding:.625rem .75rem;margin:0 0 1rem}
.warning{background:#fffbeb;border:1px solid #fcd34d;color:#78350f;border-radius:8px;padding:.5rem .75rem;margin:.5rem 0}
.scroll{overflow:auto;max-width:100%}
.scroll.tall{max-height:26rem}
table{border-collapse:collapse;font-size:.9375rem;width:100%}
th,td{text-align:left;padding:.45rem .6rem;border-bottom:1px solid #e5e7eb;vertical-align:top}
thead th{position:sticky;top:0;background:#f9fafb;font-size:.8125rem;color:#374151}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
tbody th{white-space:nowrap}
td time{white-space:nowrap}
code{font-size:.875em;background:#f3f4f6;padding:.1em .3em;border-radius:4px;overflow-wrap:anywhere}
.figures{display:grid;grid-template-columns:repeat(auto-fit,minmax(11rem,1fr));gap:.75rem;margin:0}
.figures div{background:#f9fafb;border-radius:8px;padding:.75rem}
.figures dt{font-size:.8125rem;color:#4b5563;font-weight:600}
.figures dd{margin:.125rem 0 0;font-size:1.25rem;font-weight:700;font-variant-numeric:tabular-nums;overflow-wrap:anywhere}
.pair{display:grid;gap:1rem;grid-template-columns:minmax(0,1fr)}
@media (min-width:64rem){.pair{grid-template-columns:minmax(0,3fr) minmax(0,2fr)}}
figure.chart{margin:0}
figure.chart .plot{overflow-x:auto}
figure.chart svg{width:100%;min-width:34rem;height:auto;display:block}
.legend{list-style:none;margin:.5rem 0 0;padding:0;display:flex;flex-wrap:wrap;gap:.25rem 1rem;font-size:.875rem}
.swatch{display:inline-block;width:.875rem;height:.875rem;border-radius:2px;margin-right:.375rem;vertical-align:-1px}
.swatch.line{height:.25rem;vertical-align:3px}
.status{font-weight:700;font-size:.8125rem;border-radius:999px;padding:.1rem .5rem;white-space:nowrap}
.status.active{background:#d1fae5;color:#064e3b}.status.failed{background:#fee2e2;color:#7f1d1d}
.status.superseded{background:#e5e7eb;color:#1f2937}.status.queued,.status.building{background:#e0e7ff;color:#312e81}
.drop{display:block;border:2px dashed #6b7280;border-radius:12px;padding:1rem;background:#f9fafb;margin:.5rem 0 1rem}
.drop:focus-within{border-color:#4338ca;background:#eef2ff}
.drop input[type=file]{display:block;width:100%;font:inherit;padding:1.5rem .5rem;cursor:pointer}
.row{display:flex;flex-wrap:wrap;gap:.5rem;align-items:center}
.row form{margin:0}
.cohort td.cell{text-align:right;font-variant-numeric:tabular-nums;min-width:3rem}
.r0{background:#fff;color:#111827}.r1{background:#eef2ff;color:#111827}.r2{background:#c7d2fe;color:#111827}
.r3{background:#a5b4fc;color:#111827}.r4{background:#4f46e5;color:#fff}.r5{background:#312e81;color:#fff}
.legend .r0,.legend .r1,.legend .r2,.legend .r3,.legend .r4,.legend .r5{padding:0 .4rem;border-radius:4px;border:1px solid #d1d5db}
ul.plain{margin:.25rem 0;padding-left:1.1rem}
.sr-only{position:absolute;width:1px;height:1px;padding:0;margin:-1px;overflow:hidden;clip:rect(0,0,0,0);white-space:nowrap;border:0}
nav.crumbs{font-size:.9375rem;margin:.25rem 0}
@media (max-width:40rem){main{padding:.5rem}.card{padding:1rem;border-radius:8px}h1{font-size:1.3125rem}}`;

export const csrfField = (csrf: string) => `<input type="hidden" name="csrf" value="${escapeHtml(csrf)}">`;
export const alert = (message: string | undefined) => (message ? `<div class="alert" role="alert" id="form-error">${escapeHtml(message)}</div>` : '');
export const notice = (message: string | undefined) => (message ? `<div class="notice" role="status">${escapeHtml(message)}</div>` : '');

/** A table that may be wider or taller than the screen: it scrolls in a region keyboards can reach. */
export const scrollingTable = (label: string, table: string, tall = false) =>
  `<div class="scroll${tall ? ' tall' : ''}" role="region" aria-label="${escapeHtml(label)}" tabindex="0">${table}</div>`;

function header(viewer: Viewer): string {
  const { account, accounts, mode, csrf } = viewer;
  const other = mode === 'test' ? 'live' : 'test';
  const accountPart =
    accounts.length > 1 && account
      ? `<form method="post" action="${DASHBOARD_PATH}/view">${csrfField(csrf)}<input type="hidden" name="mode" value="${mode}">
<label class="sr-only" for="account-switch">Account</label>
<select id="account-switch" name="account">${accounts
          .map((a) => `<option value="${escapeHtml(a.id)}"${a.id === account.id ? ' selected' : ''}>${escapeHtml(a.name)}</option>`)
          .join('')}</select><button class="secondary" type="submit">Switch account</button></form>`
      : account
        ? `<span>${escapeHtml(account.name)}</span>`
        : '';
  const modePart = account
    ? `<form method="post" action="${DASHBOARD_PATH}/view">${csrfField(csrf)}<input type="hidden" name="account" value="${escapeHtml(account.id)}">
<input type="hidden" name="mode" value="${other}"><span class="mode ${mode}">${mode === 'test' ? 'Test mode' : 'Live mode'}</span>
<button class="secondary" type="submit">Switch to ${other} mode</button></form>`
    : '';
  return `<header class="top"><div class="inner"><a class="brand" href="${DASHBOARD_PATH}/datasets">Dataset Service</a>
${accountPart}${modePart}
<form method="post" action="${DASHBOARD_PATH}/sign-out">${csrfField(csrf)}<span class="sr-only">Signed in as ${escapeHtml(viewer.email)}</span><button class="secondary" type="submit">Sign out</button></form>
</div></header>`;
}

/** A page of the dashboard; `viewer` adds the header of a signed-in person. */
export function page(title: string, body: string, viewer?: Viewer): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="same-origin"><title>${escapeHtml(title)} · Dataset Service</title><style>${STYLE}</style></head>
<body>${viewer ? header(viewer) : ''}<main${viewer ? '' : ' class="narrow"'}>
${viewer ? body : `<div class="card"><p class="brand">Dataset Service</p>\n${body}</div>`}
</main></body></html>`;
}

/** A page that says something went wrong or is not there, with a way back. */
export function messagePage(title: string, message: string, viewer?: Viewer): string {
  return statusPage(title, `<p>${escapeHtml(message)}</p>`, viewer);
}

/** A short page of one card: `bodyHtml` (already escaped) and a link back (to `back`, the datasets by default). */
export function statusPage(title: string, bodyHtml: string, viewer?: Viewer, back = { href: `${DASHBOARD_PATH}/datasets`, label: 'Back to your datasets' }): string {
  return page(title, `<div class="card"><h1>${escapeHtml(title)}</h1>${bodyHtml}<p><a href="${escapeHtml(back.href)}">${escapeHtml(back.label)}</a></p></div>`, viewer);
}
