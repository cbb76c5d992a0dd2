import { Database } from '@app/core';
const db = new Database();
