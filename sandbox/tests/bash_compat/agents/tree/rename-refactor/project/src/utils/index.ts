export { formatUserName, capitalize } from './string';
export { validateEmail } from './validation';
