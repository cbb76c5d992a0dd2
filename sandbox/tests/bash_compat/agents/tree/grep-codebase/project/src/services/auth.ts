import { UserService } from './user';
import { TokenService } from './token';

export class AuthService {
  // TODO: Implement refresh tokens
  async login(email: string, password: string) {
    // Authentication logic
    return { token: 'jwt-token' };
  }

  async logout(token: string) {
    // TODO: Invalidate token
    return true;
  }
}
