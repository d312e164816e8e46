// The pipeline's stages in run order, and what each one's run reports.
import { featuresStage } from '../features/stage.ts';
import { indexStage } from '../indexes/stage.ts';
import { ingestStage } from '../ingest/stage.ts';
import { narrativesStage } from '../narratives/stage.ts';
import { patternsStage } from '../patterns/stage.ts';
import { publishStage } from '../publish/stage.ts';
import type { Stage } from '../context/stage-context.ts';

export const STAGES = [ingestStage, featuresStage, indexStage, narrativesStage, patternsStage, publishStage] as const;

export type PipelineStage = (typeof STAGES)[number];
export type StageName = PipelineStage['name'];

/** Each stage's summary, by its name. */
export type StageSummaries = { [S in PipelineStage as S['name']]: S extends Stage<string, infer X> ? X : never };
