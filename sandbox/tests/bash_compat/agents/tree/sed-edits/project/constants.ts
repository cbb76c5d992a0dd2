export const API_VERSION = 'v1';
export const MAX_RETRIES = 3;
export const DEFAULT_TIMEOUT = 5000;
