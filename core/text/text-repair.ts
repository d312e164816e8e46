// Real social text arrives damaged in two common ways, both seen in the TweetEval corpus:
// - mojibake: UTF-8 bytes read as Windows-1252 somewhere upstream ("ðŸ‡ºðŸ‡¸" for 🇺🇸,
//   "ZapreÅ¡iÄ‡" for Zaprešić), which tokenises into junk terms such as "ðy" that then label a
//   narrative;
// - HTML entities left by the platform's escaping ("&amp;", "&lt;").
// The analyzer repairs both before it tokenises. Written by hand (a few lines) as the core of the
// text rules: the repair is the inverse of the one known mistake, applied only where it yields
// valid UTF-8, so text that merely contains Latin-1 letters (café, niño) is left alone.

// Windows-1252's bytes 0x80..0x9f (undefined bytes pass through as the C1 control of that code).
const CP1252_HIGH = '€\u0081‚ƒ„…†‡ˆ‰Š‹Œ\u008dŽ\u008f\u0090‘’“”•–—˜™š›œ\u009džŸ';
const BYTE_OF = new Map<string, number>();
for (let b = 0; b < 0x100; b++) BYTE_OF.set(b >= 0x80 && b < 0xa0 ? CP1252_HIGH[b - 0x80]! : String.fromCharCode(b), b);
for (let b = 0x80; b < 0xa0; b++) BYTE_OF.set(String.fromCharCode(b), b);

// A UTF-8 sequence as it reads in Windows-1252: a lead byte (0xc2..0xf4) and its continuation
// bytes (0x80..0xbf), each shown as the character of that byte.
const cls = (from: number, to: number): string => {
  let s = '';
  for (const [ch, b] of BYTE_OF) if (b >= from && b <= to) s += ch.replace(/[\\\]^-]/g, '\\$&');
  return `[${s}]`;
};
const CONT = cls(0x80, 0xbf);
const MOJIBAKE_RE = new RegExp(`${cls(0xc2, 0xdf)}${CONT}|${cls(0xe0, 0xef)}${CONT}{2}|${cls(0xf0, 0xf4)}${CONT}{3}`, 'gu');
const MOJIBAKE_HINT = /[\u00c2-\u00f4]/;

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Undo UTF-8-read-as-Windows-1252 wherever the bytes decode as valid UTF-8; other text unchanged. */
function repairMojibake(text: string): string {
  if (!MOJIBAKE_HINT.test(text)) return text;
  return text.replace(MOJIBAKE_RE, (seq) => {
    try {
      return utf8.decode(Uint8Array.from(seq, (ch) => BYTE_OF.get(ch)!));
    } catch {
      return seq;
    }
  });
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };
const ENTITY_RE = /&(?:(amp|lt|gt|quot|apos|nbsp)|#(\d{1,7})|#x([0-9a-f]{1,6}));/gi;

/** Decode the HTML entities platforms leave in post text (named XML ones, &nbsp; and numeric). */
export function decodeEntities(text: string): string {
  if (!text.includes('&')) return text;
  return text.replace(ENTITY_RE, (m, name: string | undefined, dec: string | undefined, hex: string | undefined) => {
    if (name) return ENTITIES[name.toLowerCase()]!;
    const code = dec ? Number(dec) : parseInt(hex!, 16);
    return code > 0 && code <= 0x10ffff && (code < 0xd800 || code > 0xdfff) ? String.fromCodePoint(code) : m;
  });
}

/** Both repairs, in the order the damage happened (escaped text was then mis-decoded). */
export function repairText(text: string): string {
  return decodeEntities(repairMojibake(text));
}
