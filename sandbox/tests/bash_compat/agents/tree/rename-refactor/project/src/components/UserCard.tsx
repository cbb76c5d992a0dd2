import { formatUserName, capitalize } from '../utils';

interface UserCardProps {
  firstName: string;
  lastName: string;
}

export function UserCard({ firstName, lastName }: UserCardProps) {
  const displayName = formatUserName(firstName, lastName);
  return <div>{capitalize(displayName)}</div>;
}
