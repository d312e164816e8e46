// The pipeline's stages in run order.
import { featuresStage } from '../features/stage.ts';
import { indexStage } from '../indexes/stage.ts';
import { ingestStage } from '../ingest/stage.ts';
import { narrativesStage } from '../narratives/stage.ts';
import { patternsStage } from '../patterns/stage.ts';
import { publishStage } from '../publish/stage.ts';
import type { Stage } from '../context/stage-context.ts';

export const STAGES: Stage[] = [ingestStage, featuresStage, indexStage, narrativesStage, patternsStage, publishStage];
