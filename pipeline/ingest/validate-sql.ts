// Validation and normalisation of raw records, as set-based DuckDB SQL: every record of a file is
// checked in a few vectorised passes instead of a JS loop (that is what makes 50k+ posts/s
// possible). Each check yields a human-readable reason; a record with any reason is quarantined
// with all of them, so a data engineer can fix a record in one go.
//
// Input: temp table `records(rec BIGINT, raw VARCHAR, j JSON)`; j is NULL when the record is not
// a JSON object. Output: temp table `checked` with the normalised columns plus `reasons VARCHAR[]`
// (empty when the record is valid) and `media_paths VARCHAR[]` (local files to check for existence).

import { CONTENT_TYPES, COUNT_FIELDS, PLATFORM_NAME } from '../../core/post-schema.ts';

const FIELDS = [
  'uuid', 'platform', 'content_type', 'creator_id', 'creator_handle', 'follower_count', 'title',
  'description', 'tags', 'published_at', 'observed_at', 'like_count', 'comment_count', 'share_count',
  'view_count', 'content_url', 'media', 'language', 'text_embedding', 'visual_embedding',
] as const;

const MAX_EMBEDDING_DIM = 4096;
const JSON_NUMBER = `('BIGINT','UBIGINT','DOUBLE')`;

/** NULL for both an absent key and an explicit JSON null. */
const isAbsent = (c: string) => `(${c} IS NULL OR json_type(${c}) = 'NULL')`;
const text = (c: string) => `(${c}->>'$')`;

/** A JSON value that may arrive as JSON text inside a string (CSV cells), parsed when it does. */
const jsonish = (c: string) =>
  `CASE WHEN json_type(${c}) = 'VARCHAR' AND json_valid(${c}->>'$') AND ltrim(${c}->>'$') ^@ '['
        THEN (${c}->>'$')::JSON ELSE ${c} END`;

function stringField(name: string): { value: string; reason: string } {
  const c = `f_${name}`;
  return {
    value: `CASE WHEN ${isAbsent(c)} THEN NULL ELSE nullif(trim(${text(c)}), '') END`,
    reason: `CASE WHEN NOT ${isAbsent(c)} AND json_type(${c}) <> 'VARCHAR' THEN '${name} must be a string' END`,
  };
}

/** A number, or a string holding one (CSV); finite and >= 0; fractional values are floored. */
function countField(name: string, nullable: boolean): { value: string; reason: string } {
  const c = `f_${name}`;
  const dbl = `TRY_CAST(trim(${text(c)}) AS DOUBLE)`;
  const numeric = `(json_type(${c}) IN ${JSON_NUMBER} OR (json_type(${c}) = 'VARCHAR' AND ${dbl} IS NOT NULL))`;
  return {
    value: `CASE WHEN ${isAbsent(c)} THEN ${nullable ? 'NULL' : '0'} ELSE TRY_CAST(floor(${dbl}) AS BIGINT) END`,
    reason: `CASE WHEN ${isAbsent(c)} THEN NULL
      WHEN NOT ${numeric} THEN '${name} must be a number'
      WHEN NOT isfinite(${dbl}) OR ${dbl} < 0 THEN '${name} must be a non-negative number'
      WHEN TRY_CAST(floor(${dbl}) AS BIGINT) IS NULL THEN '${name} is out of range' END`,
  };
}

/** ISO 8601 text to UTC; no offset means UTC. */
function timeField(name: string, required: boolean): { value: string; reason: string } {
  const c = `f_${name}`;
  const ts = `TRY_CAST(trim(${text(c)}) AS TIMESTAMPTZ)`;
  return {
    value: `CASE WHEN json_type(${c}) = 'VARCHAR' THEN ${ts} END`,
    reason: `CASE WHEN ${isAbsent(c)} THEN ${required ? `'missing ${name}'` : 'NULL'}
      WHEN json_type(${c}) <> 'VARCHAR' THEN '${name} must be an ISO 8601 string'
      WHEN ${ts} IS NULL THEN '${name} is not a valid ISO 8601 date-time: ' || left(${text(c)}, 40)
      WHEN ${ts} < TIMESTAMPTZ '1990-01-01' OR ${ts} > TIMESTAMPTZ '2100-01-01' THEN '${name} out of range (1990..2100)' END`,
  };
}

function embeddingField(name: string): { value: string; reason: string } {
  const c = `e_${name}`;
  const elems = `from_json(${c}, '["JSON"]')`;
  return {
    value: `CASE WHEN json_type(${c}) = 'ARRAY' THEN CAST(from_json(${c}, '["DOUBLE"]') AS FLOAT[]) END`,
    reason: `CASE WHEN ${isAbsent(c)} THEN NULL
      WHEN json_type(${c}) <> 'ARRAY' THEN '${name} must be a list of numbers'
      WHEN NOT coalesce(list_bool_and(list_transform(${elems}, lambda x: json_type(x) IN ${JSON_NUMBER})), false)
        THEN '${name} must be a list of numbers'
      WHEN json_array_length(${c}) NOT BETWEEN 2 AND ${MAX_EMBEDDING_DIM} THEN '${name} must have 2..${MAX_EMBEDDING_DIM} dimensions' END`,
  };
}

/**
 * SQL statements that turn `records` into `checked`.
 * @param fileDirRel directory of the landing file relative to DATA_DIR (media paths resolve against it)
 */
export function validationSql(fileDirRel: string): string[] {
  const extract = FIELDS.map((f) => `'$.${f}'`).join(', ');
  const unpack = FIELDS.map((f, i) => `v[${i + 1}] AS f_${f}`).join(', ');
  const counts = COUNT_FIELDS.map((f) => ({ name: f, ...countField(f, false) }));
  const follower = countField('follower_count', true);
  const strings = ['creator_handle', 'title', 'description', 'content_url', 'language'].map((f) => ({ name: f, ...stringField(f) }));
  const published = timeField('published_at', true);
  const observed = timeField('observed_at', false);
  const textEmb = embeddingField('text_embedding');
  const visualEmb = embeddingField('visual_embedding');
  const dirPrefix = fileDirRel.replaceAll("'", "''");

  // Tags: a JSON list of strings, or a string "a|b, c" (CSV); lower-case, no leading '#', unique, in order.
  const tagsRaw = `CASE WHEN json_type(e_tags) = 'ARRAY' THEN from_json(e_tags, '["JSON"]') END`;
  const tagsList = `CASE
      WHEN ${isAbsent('e_tags')} THEN []::VARCHAR[]
      WHEN json_type(e_tags) = 'VARCHAR' THEN string_split_regex(e_tags->>'$', '[|,;]')
      ELSE list_transform(${tagsRaw}, lambda x: (x->>'$')) END`;
  const tagsReason = `CASE WHEN ${isAbsent('e_tags')} OR json_type(e_tags) = 'VARCHAR' THEN NULL
      WHEN json_type(e_tags) <> 'ARRAY' OR NOT coalesce(list_bool_and(list_transform(${tagsRaw}, lambda x: json_type(x) = 'VARCHAR')), true)
        THEN 'tags must be a list of strings' END`;

  // Media: a list of {kind: image|video, path | url, frames?: [path]}; local paths relative to the
  // landing file, never escaping it.
  const mediaElems = `from_json(e_media, '["JSON"]')`;
  const safePath = (p: string) => `(${p} IS NULL OR (NOT ${p} ^@ '/' AND NOT contains(${p}, '\\') AND NOT regexp_matches(${p}, '(^|/)\\.\\.(/|$)') AND NOT regexp_matches(${p}, '^[a-zA-Z][a-zA-Z0-9+.-]*:')))`;
  const elemOk = `lambda e: json_type(e) = 'OBJECT'
      AND lower(e->>'$.kind') IN ('image', 'video')
      AND coalesce(json_type(e, '$.path'), 'NULL') IN ('VARCHAR', 'NULL')
      AND coalesce(json_type(e, '$.url'), 'NULL') IN ('VARCHAR', 'NULL')
      AND (e->>'$.path' IS NOT NULL OR (e->>'$.url') IS NOT NULL)
      AND (e->>'$.url' IS NULL OR regexp_matches(e->>'$.url', '^https?://'))
      AND ${safePath(`(e->>'$.path')`)}
      AND (coalesce(json_type(e, '$.frames'), 'NULL') = 'NULL' OR (json_type(e, '$.frames') = 'ARRAY'
        AND coalesce(list_bool_and(list_transform(from_json(e->'$.frames', '["JSON"]'), lambda fr: json_type(fr) = 'VARCHAR' AND ${safePath(`(fr->>'$')`)})), true)))`;
  const resolve = (p: string) => `CASE WHEN ${p} IS NULL THEN NULL ELSE '${dirPrefix}/' || regexp_replace(${p}, '^(\\./)+', '') END`;
  const mediaValue = `CASE WHEN json_type(e_media) = 'ARRAY' THEN list_transform(${mediaElems}, lambda e: {
      'kind': lower(e->>'$.kind'),
      'path': ${resolve(`(e->>'$.path')`)},
      'url': (e->>'$.url'),
      'frames': list_transform(from_json(e->'$.frames', '["VARCHAR"]'), lambda fr: ${resolve('fr')})
    }) ELSE [] END`;
  const mediaReason = `CASE WHEN ${isAbsent('e_media')} THEN NULL
      WHEN json_type(e_media) <> 'ARRAY' THEN 'media must be a list of {kind, path|url, frames?}'
      WHEN NOT coalesce(list_bool_and(list_transform(${mediaElems}, ${elemOk})), true)
        THEN 'media items need kind image|video and a relative path (no ..) or an http(s) url' END`;

  const contentTypes = CONTENT_TYPES.map((t) => `'${t}'`).join(', ');
  const platformRe = PLATFORM_NAME.source;

  return [
    `CREATE OR REPLACE TEMP TABLE extracted AS
       SELECT rec, raw, j IS NOT NULL AS is_object, ${unpack}
       FROM (SELECT rec, raw, j, json_extract(j, [${extract}]) AS v FROM records)`,
    `CREATE OR REPLACE TEMP TABLE extracted2 AS
       SELECT *, ${jsonish('f_tags')} AS e_tags, ${jsonish('f_media')} AS e_media,
              ${jsonish('f_text_embedding')} AS e_text_embedding, ${jsonish('f_visual_embedding')} AS e_visual_embedding
       FROM extracted`,
    `CREATE OR REPLACE TEMP TABLE checked AS
     SELECT rec, raw,
       CASE WHEN json_type(f_uuid) = 'VARCHAR' THEN trim(f_uuid->>'$') END AS uuid,
       lower(trim(f_platform->>'$')) AS platform,
       lower(trim(f_content_type->>'$')) AS content_type_given,
       TRY_CAST(TRY_CAST(trim(f_creator_id->>'$') AS DOUBLE) AS BIGINT) AS creator_id,
       ${strings.map((s) => `${s.value} AS ${s.name}`).join(',\n       ')},
       ${follower.value} AS follower_count,
       ${counts.map((s) => `${s.value} AS ${s.name}`).join(',\n       ')},
       list_filter(list_transform(${tagsList}, lambda t: lower(regexp_replace(trim(t), '^#+', ''))), lambda t: t <> '') AS tags0,
       ${published.value} AS published_at,
       ${observed.value} AS observed_at,
       ${mediaValue} AS media,
       ${textEmb.value} AS text_embedding,
       ${visualEmb.value} AS visual_embedding,
       CASE WHEN NOT is_object THEN [CASE WHEN json_valid(raw) THEN 'record is not a JSON object' ELSE 'malformed JSON' END]
       ELSE list_filter([
         CASE WHEN ${isAbsent('f_uuid')} THEN 'missing uuid'
              WHEN json_type(f_uuid) <> 'VARCHAR' THEN 'uuid must be a string'
              WHEN trim(f_uuid->>'$') = '' THEN 'uuid is empty'
              WHEN length(f_uuid->>'$') > 256 THEN 'uuid longer than 256 characters' END,
         CASE WHEN ${isAbsent('f_platform')} THEN 'missing platform'
              WHEN json_type(f_platform) <> 'VARCHAR' THEN 'platform must be a string'
              WHEN NOT regexp_full_match(lower(trim(f_platform->>'$')), '${platformRe}') THEN 'platform must be a short name of letters, digits, _ . -' END,
         CASE WHEN NOT ${isAbsent('f_content_type')} AND (json_type(f_content_type) <> 'VARCHAR'
                OR lower(trim(f_content_type->>'$')) NOT IN (${contentTypes})) THEN 'content_type must be one of ${CONTENT_TYPES.join('|')}' END,
         CASE WHEN ${isAbsent('f_creator_id')} THEN NULL
              WHEN NOT (json_type(f_creator_id) IN ${JSON_NUMBER} OR json_type(f_creator_id) = 'VARCHAR')
                OR TRY_CAST(trim(f_creator_id->>'$') AS DOUBLE) IS NULL THEN 'creator_id must be a number'
              WHEN TRY_CAST(trim(f_creator_id->>'$') AS DOUBLE) <> floor(TRY_CAST(trim(f_creator_id->>'$') AS DOUBLE))
                OR TRY_CAST(TRY_CAST(trim(f_creator_id->>'$') AS DOUBLE) AS BIGINT) IS NULL THEN 'creator_id must be an integer' END,
         ${strings.map((s) => s.reason).join(',\n         ')},
         ${follower.reason},
         ${counts.map((s) => s.reason).join(',\n         ')},
         ${tagsReason},
         ${published.reason},
         ${observed.reason},
         ${mediaReason},
         ${textEmb.reason},
         ${visualEmb.reason}
       ], lambda r: r IS NOT NULL) END AS reasons
     FROM extracted2`,
    // Unique tags in first-seen order; content_type inferred from media when not given.
    `CREATE OR REPLACE TEMP TABLE checked2 AS
     SELECT * EXCLUDE (tags0, content_type_given),
       list_filter(tags0, lambda t, i: list_position(tags0, t) = i) AS tags,
       coalesce(content_type_given, CASE
         WHEN list_bool_or(list_transform(media, lambda m: m.kind = 'video')) THEN 'video'
         WHEN len(media) > 1 THEN 'carousel'
         WHEN len(media) = 1 THEN 'image'
         ELSE 'text' END) AS content_type,
       flatten(list_transform(media, lambda m: list_concat(CASE WHEN m.path IS NULL THEN [] ELSE [m.path] END, coalesce(m.frames, [])))) AS media_paths
     FROM checked`,
  ];
}
