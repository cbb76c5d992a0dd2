import jwt from 'jsonwebtoken';
import { config } from '../config';

export function signToken(payload: object) {
  return jwt.sign(payload, config.jwtSecret);
}

export function verifyToken(token: string) {
  try {
    return jwt.verify(token, config.jwtSecret);
  } catch {
    return null;
  }
}
