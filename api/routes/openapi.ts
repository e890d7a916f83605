import fs from 'node:fs';
import path from 'node:path';
import Router from '@koa/router';
import { z } from 'zod';
import { describeRoute } from '../openapi/describe';
import { buildOpenApiDocument, DOCS_PATH, OPENAPI_PATH, type OpenApiDocument } from '../openapi/document';
import { RequestError } from '../validation';

/** Swagger UI's files, served from the npm package (no CDN); the page's start-up script is ours (no inline script). */
const SWAGGER_DIR = path.dirname(require.resolve('swagger-ui-dist/package.json'));
const ASSETS: Record<string, { file: string; type: string }> = {
  'swagger-ui.css': { file: path.join(SWAGGER_DIR, 'swagger-ui.css'), type: 'text/css; charset=utf-8' },
  'swagger-ui-bundle.js': { file: path.join(SWAGGER_DIR, 'swagger-ui-bundle.js'), type: 'text/javascript; charset=utf-8' },
  'docs-page.js': { file: path.join(__dirname, '..', 'openapi', 'docsPage.js'), type: 'text/javascript; charset=utf-8' },
};
const assetParams = z.object({ file: z.enum(Object.keys(ASSETS) as [string, ...string[]], { error: 'Unknown file' }) });

const DOCS_HTML = `<!DOCTYPE html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>Render studio API</title>
    <link rel="stylesheet" href="${DOCS_PATH}/assets/swagger-ui.css" />
  </head>
  <body>
    <main id="swagger-ui"></main>
    <script src="${DOCS_PATH}/assets/swagger-ui-bundle.js"></script>
    <script src="${DOCS_PATH}/assets/docs-page.js"></script>
  </body>
</html>
`;

const openApiDocument = z.looseObject({ openapi: z.string(), info: z.looseObject({}), paths: z.looseObject({}) });

/**
 * GET /api/openapi.json (the document of every route in `routers` and of these) and GET /api/docs (Swagger UI
 * over it). Both public: the document holds no secret and names no user's data.
 */
export function openApiRouter(routers: readonly Router[]): Router {
  const router = new Router();
  let document: OpenApiDocument | null = null;

  describeRoute(router, {
    method: 'get',
    path: OPENAPI_PATH,
    tag: 'API',
    summary: 'This OpenAPI 3.1 document',
    access: 'public',
    noDatabase: true,
    responses: { 200: openApiDocument },
  });
  router.get(OPENAPI_PATH, (ctx) => {
    // built on first use, when every router (this one included) has described its routes
    document ??= buildOpenApiDocument([...routers, router]);
    ctx.set('Cache-Control', 'no-cache');
    ctx.body = document;
  });

  describeRoute(router, {
    method: 'get',
    path: DOCS_PATH,
    tag: 'API',
    summary: 'The API reference page (Swagger UI over /api/openapi.json)',
    access: 'public',
    noDatabase: true,
    responses: { 200: { description: 'The reference page', contentType: 'text/html', schema: z.string() } },
  });
  router.get(DOCS_PATH, (ctx) => {
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = DOCS_HTML;
  });

  describeRoute(router, {
    method: 'get',
    path: `${DOCS_PATH}/assets/:file`,
    tag: 'API',
    summary: "The reference page's script and style files",
    access: 'public',
    noDatabase: true,
    params: assetParams,
    responses: {
      200: { description: 'The file', contentType: ['text/javascript', 'text/css'], schema: z.string() },
      404: { description: 'No such file', schema: z.object({ success: z.literal(false), error: z.string() }) },
    },
    omit: [400],
  });
  router.get(`${DOCS_PATH}/assets/:file`, (ctx) => {
    const parsed = assetParams.safeParse(ctx.params);
    if (!parsed.success) throw new RequestError(404, 'Not found');
    const asset = ASSETS[parsed.data.file];
    ctx.type = asset.type;
    ctx.set('Cache-Control', 'public, max-age=86400');
    ctx.body = fs.createReadStream(asset.file);
  });

  return router;
}
