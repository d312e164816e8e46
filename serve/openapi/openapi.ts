// The OpenAPI 3.1 document of the HTTP API, served at {base_url}/openapi.json. What a request may
// carry (bodies, query parameters, the Idempotency-Key) is generated from the zod schemas the
// routes and the MCP tools validate with, so a rule changed there changes here. The answers are
// plain JSON Schema 2020-12, strict where docs/api.md is (required fields, types, nullability,
// enums), and test/fast/openapi.test.ts validates real responses of every endpoint against them, so
// this document cannot drift from what the server sends. Each concern's part (search-doc.ts,
// jobs-doc.ts, ...) reads that concern's schemas; this file puts them together in the published order.
import { accountPaths, accountSchemas } from './account-doc.ts';
import { alertPaths, alertSchemas } from './alerts-doc.ts';
import { billingPaths, billingSchemas, insufficientCredits } from './billing-doc.ts';
import { jobPaths, jobSchemas } from './jobs-doc.ts';
import { mapPaths, mapSchemas } from './maps-doc.ts';
import { mediaPaths, mediaSchemas } from './media-doc.ts';
import { errors, type Schema } from './schema-kit.ts';
import { searchHandedToJob, searchPaths, searchSchemas } from './search-doc.ts';
import { sharedSchemas } from './shared-schemas.ts';

export function openApiDocument(prefix: string): Schema {
  return {
    openapi: '3.1.0',
    info: {
      title: 'Content intelligence service',
      version: 'v1.0.1',
      description:
        'Search, narrative and pattern maps over social posts, billed in credits (1 credit = 1.00 ' +
        'USD). Every request carries x-api-key; credits are integer micro-credits inside and ' +
        'decimals in JSON. Field definitions: docs/fields.md.',
    },
    servers: [{ url: prefix || '/', description: 'http://HOST:PORT + SERVICE_PREFIX' }],
    security: [{ apiKey: [] }],
    paths: {
      ...searchPaths(),
      ...jobPaths(),
      ...mapPaths(),
      ...billingPaths(),
      ...mediaPaths(),
      ...accountPaths(),
      ...alertPaths(),
      '/mcp': {
        post: {
          summary:
            'The MCP tool server (Model Context Protocol, Streamable HTTP, stateless, JSON responses): ' +
            'every capability above as a tool, billed as its HTTP call (README: "MCP")',
          requestBody: {
            required: true,
            content: { 'application/json': { schema: { type: 'object', description: 'a JSON-RPC 2.0 message of MCP' } } },
          },
          responses: {
            200: { description: 'The JSON-RPC response' },
            202: { description: 'A notification, accepted (no body)' },
            ...errors(400, 403, 405, 406, 415, 429),
          },
        },
      },
      '/openapi.json': { get: { summary: 'This document', security: [], responses: { 200: { description: 'OpenAPI 3.1' } } } },
    },
    components: {
      securitySchemes: { apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key' } },
      // The components in the order the document has always listed them.
      schemas: {
        ...searchSchemas(),
        ...sharedSchemas(),
        ...alertSchemas(),
        SearchHandedToJob: searchHandedToJob,
        ...jobSchemas(),
        InsufficientCredits: insufficientCredits,
        ...mapSchemas(),
        ...billingSchemas(),
        ...mediaSchemas(),
        ...accountSchemas(),
      },
    },
  };
}
