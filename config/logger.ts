import pino from 'pino';
import { logLevelFrom } from './env';

export const logger = pino({ level: logLevelFrom(), base: { service: process.env.SERVICE_NAME ?? 'render-studio' } });
export type Logger = typeof logger;
