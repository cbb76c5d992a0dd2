import { Request, Response } from 'express';
import { OrderService } from '../services/order';
import { logger } from '../utils/logger';

export class OrderController {
  private orderService: OrderService;

  constructor() {
    this.orderService = new OrderService();
  }

  async create(req: Request, res: Response): Promise<void> {
    const order = req.body;
    logger.info(`Creating order for user ${req.user.id}`);

    try {
      const result = await this.orderService.processOrder(order);
      res.status(201).json(result);
    } catch (error) {
      logger.error(`Order creation failed: ${error.message}`);
      res.status(400).json({ error: error.message });
    }
  }

  async get(req: Request, res: Response): Promise<void> {
    const orderId = req.params.id;
    // Implementation here
  }
}
