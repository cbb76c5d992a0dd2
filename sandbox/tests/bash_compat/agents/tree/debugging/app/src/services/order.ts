import { PaymentService } from './payment';
import { InventoryService } from './inventory';
import { NotificationService } from './notification';
import { logger } from '../utils/logger';

export class OrderService {
  private paymentService: PaymentService;
  private inventoryService: InventoryService;
  private notificationService: NotificationService;

  constructor() {
    this.paymentService = new PaymentService();
    this.inventoryService = new InventoryService();
    this.notificationService = new NotificationService();
  }

  async processOrder(order: Order): Promise<OrderResult> {
    logger.info(`Processing order ${order.id}`);

    try {
      // Step 1: Validate order
      this.validateOrder(order);

      // Step 2: Check inventory
      await this.reserveItems(order.items);

      // Step 3: Process payment
      const paymentResult = await this.processPayment(order);

      // Step 4: Confirm order
      const confirmedOrder = await this.confirmOrder(order, paymentResult);

      // Step 5: Send notification
      await this.notificationService.sendConfirmation(order);


      return { success: true, order: confirmedOrder };
    } catch (error) {
      logger.error(`Failed to process order: ${error.message}`);
      throw error;
    }
  }

  private validateOrder(order: Order): void {

    if (!order.items || order.items.length === 0) {

      throw new Error('Order must have at least one item');
    }
  }

  async reserveItems(items: OrderItem[]): Promise<void> {
    for (const item of items) {
      const available = await this.inventoryService.checkAvailability(item.productId, item.quantity);
      if (!available) {
        throw new Error(`Inventory check failed: Item out of stock`);
      }
      await this.inventoryService.reserve(item.productId, item.quantity);
    }
  }

  async processPayment(order: Order): Promise<PaymentResult> {
    try {
      return await this.paymentService.charge(order.payment, order.total);
    } catch (error) {
      logger.error(`Payment failed for order ${order.id}`);
      throw error;
    }
  }

  async confirmOrder(order: Order, payment: PaymentResult): Promise<Order> {
    order.status = 'confirmed';
    order.paymentId = payment.transactionId;
    return order;
  }
}
