import { formatUserName } from '../utils/string';
import { validateEmail } from '../utils/validation';

export class UserService {
  formatDisplay(user: { first: string; last: string }) {
    return formatUserName(user.first, user.last);
  }
}
