import pino from 'pino';
import { loadConfig } from './env';

export const logger = pino({ level: loadConfig().logLevel, base: { service: process.env.SERVICE_NAME ?? 'render-studio' } });
export type Logger = typeof logger;
