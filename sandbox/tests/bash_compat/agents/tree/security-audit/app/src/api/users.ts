import { Request, Response } from 'express';

export function getUser(req: Request, res: Response) {
  const userId = req.params.id;
  // Missing authorization check!
  const user = db.findUser(userId);
  res.json(user);
}

export function deleteUser(req: Request, res: Response) {
  // No auth check - anyone can delete!
  db.deleteUser(req.params.id);
  res.json({ success: true });
}
