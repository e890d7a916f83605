'use strict';
/**
 * `npm start`'s payments: with no Stripe key and NODE_ENV not production, the local test-mode checkout
 * (devStripe/main.ts) runs under the supervisor beside the API, with a key and webhook secret made for this start,
 * and the API's Stripe SDK is pointed at it (STRIPE_API_BASE). Whether it runs, and on which port, is
 * config/env.ts localStripeFrom (read through tsx, so the rule lives in one place).
 */
const crypto = require('node:crypto');
const path = require('node:path');
const services = require('./services');

/** config/env.ts, loaded through tsx's scoped require (nothing is registered for the rest of this process). */
function appConfigModule(root) {
  const { require: tsxRequire } = require('tsx/cjs/api');
  return tsxRequire(path.join(root, 'config', 'env.ts'), __filename);
}

/** A loopback address: only this machine reaches a server bound to it. */
function isLoopback(host) {
  return host === 'localhost' || host === '::1' || /^127\./.test(host);
}

/**
 * What `npm start` does for payments. `env` is the environment the API and worker will get; with the local checkout
 * on, its Stripe variables are set here. Returns null when the local checkout does not run, else how to start it.
 * Throws services.StartupError with the fix when the configuration refuses it or its port is taken.
 */
async function planLocalStripe({ root, env, dataDir, appHost, appLocalHost, appPort }) {
  const config = appConfigModule(root);
  let local;
  try {
    local = config.localStripeFrom(env);
  } catch (err) {
    if (err && err.name === 'ConfigError') throw new services.StartupError(err.message);
    throw err;
  }
  if (!local.enabled) return null;
  if (local.port && (await services.portOpen(local.port, appLocalHost))) {
    throw new services.StartupError(
      `Port ${local.port} is taken, so the local test-mode checkout cannot listen there. Fix: set LOCAL_STRIPE_PORT to a free port (or unset it: any free port), or set STRIPE_SECRET_KEY to use Stripe.`,
    );
  }
  const port = local.port || (await services.freePort());
  const publicHost = env.PUBLIC_URL ? new URL(env.PUBLIC_URL).hostname : appLocalHost;
  const apiBase = `http://${appLocalHost}:${port}`;
  // made for this start: the app's webhook trusts only events signed with it, so nothing else can credit anyone
  env.STRIPE_SECRET_KEY = `sk_test_local_${crypto.randomBytes(16).toString('hex')}`;
  env.STRIPE_WEBHOOK_SECRET = `whsec_${crypto.randomBytes(24).toString('hex')}`;
  env.STRIPE_API_BASE = apiBase;
  const args = [
    'devStripe/main.ts',
    '--port', String(port),
    '--host', appHost,
    '--public-url', `http://${publicHost.includes(':') ? `[${publicHost}]` : publicHost}:${port}`,
    '--webhook-url', `http://${appLocalHost}:${appPort}/api/stripe/webhook`,
    '--state-file', path.join(dataDir, 'stripe-test', 'state.json'),
  ];
  return { port, apiBase, args, exposed: !isLoopback(appHost) };
}

module.exports = { planLocalStripe, isLoopback };
