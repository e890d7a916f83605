// The reference page's start-up (GET /api/docs): a file of its own, because the CSP allows no inline script.
window.addEventListener('DOMContentLoaded', function () {
  window.ui = SwaggerUIBundle({
    url: '/api/openapi.json',
    dom_id: '#swagger-ui',
    deepLinking: true,
    presets: [SwaggerUIBundle.presets.apis],
    layout: 'BaseLayout',
    // "Try it out" runs requests as the signed-in browser user (same origin, so the CSRF check lets them through)
    withCredentials: true,
  });
});
