// Brand and product mentions (`brandProducts`) by dictionary: a configurable list of
// `{ name, aliases?, brand? }`. Matching works on the project analyzer's terms, so it is case- and
// diacritic-insensitive (Nestlé = NESTLE = nestle), whole-word by construction ("Applebee's" is not
// "Apple"), joins plurals ("AirPods" = "AirPod") and reads hashtags (#CocaCola -> coca cola).
// Every alias (and the name) is analysed the same way into a term sequence; the post's terms are
// scanned left to right and, at each position, the longest alias sequence that starts there wins
// ("Model 3 Performance" before "Model 3"); matched terms are consumed. @mentions and hashtags also
// match an entry when they equal an alias with its spaces removed (@CocaCola, #tesla).
// Output: entry names in order of first mention (words and hashtags, then @mentions), each once; a product entry with `brand` set also
// adds its brand right after it ("iPhone" -> ["iPhone", "Apple"]).
// Aliases with no terms after analysis (pure stop words or single letters, e.g. "H&M") cannot match
// and are reported by compileBrands in `unmatchable`.
import fs from 'node:fs';
import { analyze, terms } from '../text/analyzer.ts';

export interface BrandEntry {
  /** Canonical name, returned on a match; also matched itself. */
  name: string;
  aliases?: string[];
  /** For a product: the brand it belongs to, returned after it. */
  brand?: string;
}

export interface BrandDictionary {
  entries: BrandEntry[];
  /** first term -> candidate alias sequences starting with it, longest first. */
  byFirst: Map<string, Array<{ seq: string[]; entry: number }>>;
  /** alias with spaces removed -> entry (for @mentions and hashtags). */
  compact: Map<string, number>;
  unmatchable: string[];
}

/** Default dictionary: globally known consumer brands and flagship products. Names that are
 * everyday words or common first names (Target, Shell, Gap, Dove, Subway, Corona, Visa, Chase,
 * Delta, Zoom, Slack, Steam, Converse, Vans, Puma, Fiat, Meta, Wendy's, Levi's, Lay's) are left out,
 * and products with generic names are listed by their full name ("Samsung Galaxy", "Google Pixel");
 * pass your own file for those. "Apple" stays (by far the most discussed), accepting that it also
 * matches the fruit. */
export const DEFAULT_BRANDS: BrandEntry[] = [
  // technology
  { name: 'Apple', aliases: ['Apple Inc'] },
  { name: 'iPhone', brand: 'Apple' },
  { name: 'iPad', brand: 'Apple' },
  { name: 'MacBook', brand: 'Apple', aliases: ['MacBook Air', 'MacBook Pro'] },
  { name: 'AirPods', brand: 'Apple', aliases: ['AirPods Pro'] },
  { name: 'Apple Watch', brand: 'Apple' },
  { name: 'Vision Pro', brand: 'Apple', aliases: ['Apple Vision Pro'] },
  { name: 'Samsung', aliases: ['Samsung Electronics'] },
  { name: 'Samsung Galaxy', brand: 'Samsung', aliases: ['Galaxy S24', 'Galaxy S25', 'Galaxy Z Fold'] },
  { name: 'Google', aliases: ['Alphabet'] },
  { name: 'Google Pixel', brand: 'Google', aliases: ['Pixel 8', 'Pixel 9', 'Pixel 10'] },
  { name: 'Microsoft' },
  { name: 'Microsoft Windows', brand: 'Microsoft', aliases: ['Windows 11', 'Windows 10'] },
  { name: 'Xbox', brand: 'Microsoft', aliases: ['Xbox Series X'] },
  { name: 'Sony' },
  { name: 'PlayStation', brand: 'Sony', aliases: ['PS5', 'PS4', 'PlayStation 5'] },
  { name: 'Nintendo' },
  { name: 'Nintendo Switch', brand: 'Nintendo', aliases: ['Switch 2'] },
  { name: 'Facebook', brand: 'Meta' },
  { name: 'Instagram', brand: 'Meta' },
  { name: 'WhatsApp', brand: 'Meta' },
  { name: 'TikTok' },
  { name: 'YouTube', brand: 'Google' },
  { name: 'Snapchat' },
  { name: 'X (Twitter)', aliases: ['Twitter'] },
  { name: 'Reddit' },
  { name: 'LinkedIn' },
  { name: 'Pinterest' },
  { name: 'Discord' },
  { name: 'Twitch' },
  { name: 'Spotify' },
  { name: 'Netflix' },
  { name: 'Disney', aliases: ['Disney+', 'Disney Plus', 'Walt Disney'] },
  { name: 'HBO', aliases: ['HBO Max'] },
  { name: 'Hulu' },
  { name: 'Amazon' },
  { name: 'Prime Video', brand: 'Amazon', aliases: ['Amazon Prime'] },
  { name: 'Kindle', brand: 'Amazon' },
  { name: 'OpenAI' },
  { name: 'ChatGPT', brand: 'OpenAI' },
  { name: 'Nvidia', aliases: ['GeForce'] },
  { name: 'Intel' },
  { name: 'AMD', aliases: ['Ryzen', 'Radeon'] },
  { name: 'Dell' },
  { name: 'Hewlett-Packard', aliases: ['HP Inc', 'HP laptop', 'HP printer'] },
  { name: 'Lenovo' },
  { name: 'Asus' },
  { name: 'Acer' },
  { name: 'Logitech' },
  { name: 'Xiaomi' },
  { name: 'Huawei' },
  { name: 'OnePlus' },
  { name: 'Motorola' },
  { name: 'Nokia' },
  { name: 'LG', aliases: ['LG Electronics'] },
  { name: 'Panasonic' },
  { name: 'Philips' },
  { name: 'Bose' },
  { name: 'JBL' },
  { name: 'Beats by Dre', brand: 'Apple' },
  { name: 'GoPro' },
  { name: 'DJI' },
  { name: 'Nikon' },
  { name: 'Canon EOS', brand: 'Canon' },
  { name: 'Fujifilm' },
  { name: 'Dyson' },
  { name: 'Uber' },
  { name: 'Airbnb' },
  { name: 'PayPal' },
  { name: 'Venmo' },
  { name: 'Shopify' },
  { name: 'eBay' },
  { name: 'Etsy' },
  { name: 'Adobe', aliases: ['Photoshop'] },
  { name: 'Canva' },
  { name: 'Duolingo' },
  // games
  { name: 'Fortnite' },
  { name: 'Minecraft' },
  { name: 'Roblox' },
  { name: 'Call of Duty' },
  { name: 'League of Legends' },
  { name: 'EA Sports', aliases: ['Electronic Arts'] },
  // automotive
  { name: 'Tesla' },
  { name: 'Model 3', brand: 'Tesla', aliases: ['Tesla Model 3'] },
  { name: 'Model Y', brand: 'Tesla', aliases: ['Tesla Model Y'] },
  { name: 'Cybertruck', brand: 'Tesla' },
  { name: 'Toyota' },
  { name: 'Honda' },
  { name: 'Ford' },
  { name: 'Chevrolet', aliases: ['Chevy'] },
  { name: 'BMW' },
  { name: 'Mercedes-Benz', aliases: ['Mercedes'] },
  { name: 'Audi' },
  { name: 'Volkswagen', aliases: ['VW'] },
  { name: 'Porsche' },
  { name: 'Ferrari' },
  { name: 'Lamborghini' },
  { name: 'Hyundai' },
  { name: 'Kia' },
  { name: 'Nissan' },
  { name: 'Subaru' },
  { name: 'Volvo' },
  { name: 'BYD' },
  { name: 'Rivian' },
  { name: 'Peugeot' },
  { name: 'Renault' },
  // apparel, beauty, luxury
  { name: 'Nike', aliases: ['Air Jordan', 'Air Max'] },
  { name: 'Adidas' },
  { name: 'Under Armour' },
  { name: 'New Balance' },
  { name: 'Reebok' },
  { name: 'Lululemon' },
  { name: 'Patagonia' },
  { name: 'The North Face', aliases: ['North Face'] },
  { name: 'Zara' },
  { name: 'Uniqlo' },
  { name: 'Shein' },
  { name: 'Gucci' },
  { name: 'Louis Vuitton' },
  { name: 'Chanel' },
  { name: 'Prada' },
  { name: 'Hermès', aliases: ['Hermes'] },
  { name: 'Dior' },
  { name: 'Balenciaga' },
  { name: 'Rolex' },
  { name: 'Ray-Ban' },
  { name: 'Sephora' },
  { name: "L'Oréal", aliases: ['LOreal'] },
  { name: 'Maybelline' },
  { name: 'MAC Cosmetics' },
  { name: 'Fenty Beauty', aliases: ['Fenty'] },
  { name: 'Glossier' },
  { name: 'Nivea' },
  { name: 'CeraVe' },
  // food, drink, restaurants
  { name: 'Coca-Cola', aliases: ['Coke', 'Coca Cola'] },
  { name: 'Pepsi' },
  { name: 'Red Bull' },
  { name: 'Monster Energy' },
  { name: 'Starbucks' },
  { name: "McDonald's", aliases: ['McDonalds'] },
  { name: 'Burger King' },
  { name: 'KFC' },
  { name: 'Taco Bell' },
  { name: 'Chick-fil-A', aliases: ['Chickfila'] },
  { name: "Domino's Pizza", aliases: ['Dominos Pizza'] },
  { name: 'Pizza Hut' },
  { name: 'Chipotle' },
  { name: "Dunkin'", aliases: ['Dunkin Donuts', 'Dunkin'] },
  { name: 'Nestlé', aliases: ['Nestle'] },
  { name: 'Nutella' },
  { name: 'Oreo' },
  { name: 'Doritos' },
  { name: 'Heineken' },
  { name: 'Budweiser' },
  { name: 'Guinness' },
  { name: 'Gatorade' },
  { name: 'Nespresso' },
  // retail, travel, finance
  { name: 'Walmart' },
  { name: 'Costco' },
  { name: 'IKEA' },
  { name: 'Best Buy' },
  { name: 'Home Depot' },
  { name: "Trader Joe's", aliases: ['Trader Joes'] },
  { name: 'Whole Foods' },
  { name: 'Tesco' },
  { name: 'Aldi' },
  { name: 'Lidl' },
  { name: 'Booking.com', aliases: ['Booking com'] },
  { name: 'Expedia' },
  { name: 'Ryanair' },
  { name: 'Marriott' },
  { name: 'Hilton' },
  { name: 'Mastercard' },
  { name: 'American Express', aliases: ['Amex'] },
  { name: 'Revolut' },
  { name: 'Klarna' },
  { name: 'Coinbase' },
  { name: 'Binance' },
];

function compactForm(seq: string[]): string {
  return seq.join('');
}

/** Build the matching index of a dictionary. */
export function compileBrands(entries: BrandEntry[]): BrandDictionary {
  const byFirst = new Map<string, Array<{ seq: string[]; entry: number }>>();
  const compact = new Map<string, number>();
  const unmatchable: string[] = [];
  entries.forEach((e, i) => {
    for (const alias of new Set([e.name, ...(e.aliases ?? [])])) {
      const seq = terms(alias);
      if (seq.length === 0) {
        unmatchable.push(alias);
        continue;
      }
      const list = byFirst.get(seq[0]!) ?? [];
      if (!list.some((c) => c.seq.join(' ') === seq.join(' '))) list.push({ seq, entry: i });
      byFirst.set(seq[0]!, list);
      const c = compactForm(seq);
      if (!compact.has(c)) compact.set(c, i);
      // "Coca-Cola" is also written "cocacola" (as a hashtag or a word)
      if (seq.length > 1 && !byFirst.has(c)) byFirst.set(c, [{ seq: [c], entry: i }]);
      else if (seq.length > 1) {
        const l = byFirst.get(c)!;
        if (!l.some((x) => x.seq.length === 1)) l.push({ seq: [c], entry: i });
      }
    }
  });
  for (const list of byFirst.values()) list.sort((a, b) => b.seq.length - a.seq.length);
  return { entries, byFirst, compact, unmatchable };
}

function isEntryArray(x: unknown): x is BrandEntry[] {
  return Array.isArray(x);
}

function validate(x: unknown, source: string): BrandEntry[] {
  if (!isEntryArray(x)) throw new Error(`${source}: expected a JSON list of { name, aliases?, brand? }`);
  return x.map((e, i) => {
    const o = e as Partial<BrandEntry> | null;
    if (!o || typeof o.name !== 'string' || !o.name.trim()) throw new Error(`${source}[${i}]: "name" must be a non-empty string`);
    if (o.aliases !== undefined && (!Array.isArray(o.aliases) || o.aliases.some((a) => typeof a !== 'string'))) {
      throw new Error(`${source}[${i}]: "aliases" must be a list of strings`);
    }
    if (o.brand !== undefined && typeof o.brand !== 'string') throw new Error(`${source}[${i}]: "brand" must be a string`);
    return { name: o.name, ...(o.aliases ? { aliases: o.aliases } : {}), ...(o.brand ? { brand: o.brand } : {}) };
  });
}

/** The dictionary from a JSON file (a list of { name, aliases?, brand? }), else DEFAULT_BRANDS. */
export function loadBrandDictionary(file?: string | null): BrandDictionary {
  if (!file) return compileBrands(DEFAULT_BRANDS);
  return compileBrands(validate(JSON.parse(fs.readFileSync(file, 'utf8')), file));
}

const compiledCache = new WeakMap<BrandEntry[], BrandDictionary>();

/** Brands and products a post mentions, by the dictionary (see the header). */
export function brandProducts(text: string | null | undefined, dictionary: BrandDictionary | BrandEntry[]): string[] {
  if (!text) return [];
  let dict: BrandDictionary;
  if (isEntryArray(dictionary)) {
    dict = compiledCache.get(dictionary) ?? compileBrands(dictionary);
    compiledCache.set(dictionary, dict);
  } else dict = dictionary;
  const a = analyze(text);
  const hits: number[] = [];
  const t = a.terms;
  // Folding diacritics must not turn a word into a brand (German "über" is not Uber): a
  // one-word match of a plain-ASCII name must also be in the text as written.
  const raw = text.normalize('NFKC').toLowerCase();
  const plain = (s: string) => /^[\x00-\x7f]+$/.test(s);
  for (let i = 0; i < t.length;) {
    const cands = dict.byFirst.get(t[i]!);
    const hit = cands?.find(
      (c) => c.seq.every((s, j) => t[i + j] === s) && (c.seq.length > 1 || !plain(c.seq[0]!) || raw.includes(c.seq[0]!)),
    );
    if (hit) {
      hits.push(hit.entry);
      i += hit.seq.length;
    } else i++;
  }
  for (const m of a.mentions) {
    const e = dict.compact.get(m.replace(/[_.]/g, ''));
    if (e !== undefined) hits.push(e);
  }
  const out: string[] = [];
  const add = (n: string) => {
    if (!out.includes(n)) out.push(n);
  };
  for (const e of hits) {
    const entry = dict.entries[e]!;
    add(entry.name);
    if (entry.brand) add(entry.brand);
  }
  return out;
}
