import { api } from './client';

export interface Profile {
  id: string;
  name: string;
  email: string;
  createdAt: string;
}

export interface ChangePasswordInput {
  currentPassword: string;
  newPassword: string;
  confirmPassword: string;
}

export async function fetchProfile(): Promise<Profile> {
  const body = await api.get('profile').json<{ success: true; profile: Profile }>();
  return body.profile;
}

export async function updateProfileName(name: string): Promise<Profile> {
  const body = await api.patch('profile', { json: { name } }).json<{ success: true; profile?: Profile }>();
  // the reply may omit the profile; the caller re-reads it either way
  return body.profile ?? fetchProfile();
}

export async function changePassword(input: ChangePasswordInput): Promise<void> {
  await api.post('profile/password', { json: input });
}
