// VADER's scorer, from the `vader-sentiment` package's own source, with a faster tokenizer.
//
// The package's tokenizer (SentiText.get_words_and_emoticons) builds a dictionary of every word
// joined to each of 17 punctuation marks on both sides, i.e. ~34 new strings per word of every
// post, just to strip leading or trailing punctuation; it takes ~85% of a post's scoring time.
// At a million posts that is minutes. So the package's source module (src/, shipped in the package;
// its bundle exports only the analyzer and hides SentiText) is evaluated once here, unchanged but
// for ES-module syntax, and that one method is replaced by an equivalent that looks each token up
// instead: same tokens, same order, hence the same scores (test/fast/vader-engine.test.ts compares the
// two on thousands of real posts). Everything else (lexicon, rules, constants) is the package's.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

export interface PolarityScores {
  neg: number;
  neu: number;
  pos: number;
  compound: number;
}
interface SentiTextClass {
  prototype: { text: string; get_words_and_emoticons(): string[] };
}
interface AnalyzerClass {
  polarity_scores(text: string): PolarityScores;
}

const require = createRequire(import.meta.url);

/** The module's top-level declarations, evaluated as a function body (it only imports its lexicon). */
function evaluateModule(file: string, inject: Record<string, unknown>, exportNames: string[]): Record<string, unknown> {
  let src = fs.readFileSync(file, 'utf8');
  src = src.replace(/^export (const|class|function|let) /gm, '$1 ');
  if (/^\s*(import|export)\s/m.test(src))
    throw new Error(`${file}: unexpected module syntax; vader-sentiment changed, update core/enrichment/vader-engine.ts`);
  // eslint-disable-next-line @typescript-eslint/no-implied-eval
  const body = `"use strict";\n${src}\nreturn { ${exportNames.join(', ')} };`;
  return new Function(...Object.keys(inject), body)(...Object.values(inject)) as Record<string, unknown>;
}

function load(): { SentiText: SentiTextClass; SentimentIntensityAnalyzer: AnalyzerClass; punctuation: string[]; punctuationRe: RegExp } {
  const dir = path.join(path.dirname(require.resolve('vader-sentiment/package.json')), 'src');
  const { lexicon } = evaluateModule(path.join(dir, 'vader_lexicon.js'), {}, ['lexicon']);
  const mainFile = path.join(dir, 'vaderSentiment.js');
  const requireLine = "require('./vader_lexicon.js').lexicon";
  if (!fs.readFileSync(mainFile, 'utf8').includes(requireLine))
    throw new Error(`${mainFile}: lexicon import not found; vader-sentiment changed`);
  const m = evaluateModule(mainFile, { require: () => ({ lexicon }) }, [
    'SentiText',
    'SentimentIntensityAnalyzer',
    'PUNC_LIST',
    'REGEX_REMOVE_PUNCTUATION',
  ]);
  return {
    SentiText: m.SentiText as SentiTextClass,
    SentimentIntensityAnalyzer: m.SentimentIntensityAnalyzer as AnalyzerClass,
    punctuation: m.PUNC_LIST as string[],
    punctuationRe: m.REGEX_REMOVE_PUNCTUATION as RegExp,
  };
}

const engine = load();
const { punctuation, punctuationRe } = engine;

/**
 * The package's rule, without its dictionary: a token (longer than one character) that is one of
 * the text's punctuation-free words with one PUNC_LIST entry before or after it becomes that word.
 * The words hold no punctuation, so at most one (entry, word) split fits a token.
 */
function wordsAndEmoticons(text: string): string[] {
  const words = new Set(
    text
      .replace(punctuationRe, '')
      .split(/\s/)
      .filter((w) => w.length > 1),
  );
  const out = text.split(/\s/).filter((t) => t.length > 1);
  for (let i = 0; i < out.length; i++) {
    const t = out[i]!;
    let hit: string | undefined;
    for (const p of punctuation) {
      if (t.length <= p.length) continue;
      if (t.endsWith(p) && words.has(t.slice(0, t.length - p.length))) hit = t.slice(0, t.length - p.length);
      else if (t.startsWith(p) && words.has(t.slice(p.length))) hit = t.slice(p.length);
    }
    if (hit !== undefined) out[i] = hit;
  }
  return out;
}

engine.SentiText.prototype.get_words_and_emoticons = function (this: { text: string }) {
  return wordsAndEmoticons(this.text);
};

/** VADER polarity scores of an already prepared text (see vader.ts), as the package computes them. */
export function polarityScores(text: string): PolarityScores {
  return engine.SentimentIntensityAnalyzer.polarity_scores(text);
}
