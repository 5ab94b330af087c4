/**
 * The AI provider adapters (docs/architecture.md, "AI builder"): one interface over OpenAI-compatible and Anthropic
 * streaming APIs.
 */
export { ANTHROPIC_VERSION } from './anthropic';
export { type AiClient, type AiClientOptions, aiClientOptionsFrom, createAiClient, type TestResult } from './client';
export { AI_ERROR_CODES, type AiErrorCode, AiProviderError, isAiProviderError, retryAfterMs } from './errors';
export { collectAnswer, type ModelAnswer } from './turn';
export * from './types';
