/** A project as the API answers it (the projects list card, GET /api/projects/:id), shared by the API and the front end. */
export interface ProjectView {
  id: string;
  user_id: string;
  name: string;
  address: string | null;
  created_at: string;
  updated_at: string;
  /** A signed link to the oldest render's image. */
  thumbnail: string | null;
}
