// PublicEnrichment (docs/api.md, "PublicEnrichment") of every row, as the serving layer reads it: every field present
// with its type and range, coverage flags true exactly where the part was computed, aestheticStyle
// from the media, attributeConfidence over the text and visual extractors.
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { dataDirLayout } from '../../core/infra/data-dir.ts';
import { EMOTION_LABELS, VISUAL_STYLE_CONFIDENCE } from '../../core/enrichment/enrich-text.ts';
import { generationDir, readCurrent } from '../../core/snapshots/generations.ts';
import { loadSearchIndex } from '../../core/ranking/search-index.ts';
import { STYLE_VOCABULARY } from '../../pipeline/features/visual.ts';
import { ROOT } from '../helpers/child.ts';
import { readSnapshot, runPipeline } from '../helpers/pipeline.ts';
import { cleanupTmp, tmpDir } from '../helpers/tmp.ts';

test('every row has a complete PublicEnrichment with coverage flags that match what was computed', async () => {
  const d = tmpDir();
  fs.cpSync(path.join(ROOT, 'fixtures', 'sample', 'posts'), path.join(d, 'landing', 'sample'), { recursive: true });
  await runPipeline(d);
  const index = await loadSearchIndex(generationDir(dataDirLayout(d), (await readCurrent(dataDirLayout(d)))!));
  const media = new Set(
    (await readSnapshot(d, 'visual-elements', 'row_id::INT AS r', 'WHERE visual_error IS NULL')).map((x) => x.r as number),
  );
  const text = await readSnapshot(d, 'posts', "(coalesce(title, '') || coalesce(description, '') || array_to_string(tags, ' ')) AS t", '');
  const keys = [
    'aestheticStyle',
    'attributeConfidence',
    'brandProducts',
    'coverage',
    'emotionMood',
    'noveltyScore',
    'saturationScore',
    'themes',
    'tone',
    'toneConfidence',
  ];
  let styled = 0;
  let styleOnly = 0;
  for (let row = 0; row < index.rows; row++) {
    const e = index.enrichment.get(row);
    assert.equal(Object.keys(e).sort(), keys);
    assert.equal(Object.keys(e.coverage).sort(), ['attributes', 'novelty', 'sentiment']);
    assert.is(e.coverage.sentiment, e.tone !== null, `row ${row}: sentiment coverage iff tone`);
    assert.is(e.toneConfidence === null, e.tone === null);
    if (e.tone !== null) assert.ok(['negative', 'neutral', 'positive'].includes(e.tone) && e.toneConfidence! > 0 && e.toneConfidence! <= 1);
    assert.is(e.coverage.novelty, e.noveltyScore !== null);
    for (const x of [e.noveltyScore, e.saturationScore, e.attributeConfidence]) assert.ok(x === null || (x >= 0 && x <= 1));
    for (const m of e.emotionMood) assert.ok((EMOTION_LABELS as readonly string[]).includes(m));
    for (const s of e.aestheticStyle) assert.ok((STYLE_VOCABULARY as readonly string[]).includes(s), s);
    if (!media.has(row)) assert.equal(e.aestheticStyle, [], `row ${row}: no media, no style`);
    if (e.aestheticStyle.length) styled++;
    // No text and no media: nothing was computed, and the flags say so.
    if (!(text[row]!.t as string).trim() && !media.has(row)) assert.equal([e.coverage.attributes, e.coverage.sentiment], [false, false]);
    if (media.has(row)) assert.ok(e.coverage.attributes, `row ${row}: media read, attributes computed`);
    if (e.aestheticStyle.length && !e.emotionMood.length && !e.brandProducts.length) {
      assert.ok(Math.abs(e.attributeConfidence! - VISUAL_STYLE_CONFIDENCE) < 1e-6, 'style alone: its confidence');
      styleOnly++;
    }
    if (!e.aestheticStyle.length && !e.emotionMood.length && !e.brandProducts.length) assert.is(e.attributeConfidence, null);
  }
  assert.ok(styled > 50, `${styled} rows with a style`);
  assert.ok(styleOnly > 0);
});

test.after.each(cleanupTmp);
test.run();
