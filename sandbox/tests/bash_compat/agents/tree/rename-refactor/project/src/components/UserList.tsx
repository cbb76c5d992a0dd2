import { formatUserName } from '../utils/string';

export function UserList({ users }) {
  return users.map(u => formatUserName(u.first, u.last));
}
