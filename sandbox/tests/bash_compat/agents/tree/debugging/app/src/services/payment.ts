import { PaymentValidator } from '../validators/payment';
import { PaymentGateway } from '../gateways/payment';
import { logger } from '../utils/logger';

export class PaymentService {
  private validator: PaymentValidator;
  private gateway: PaymentGateway;

  constructor() {
    this.validator = new PaymentValidator();
    this.gateway = new PaymentGateway();
  }

  async charge(payment: PaymentInfo, amount: number): Promise<PaymentResult> {
    logger.info(`Charging ${amount} to payment method`);

    // Validate payment details
    const validationResult = this.validator.validate(payment);
    if (!validationResult.valid) {
      throw new Error(`Payment validation failed: ${validationResult.error}`);
    }

    // Process payment through gateway
    try {
      const result = await this.gateway.processPayment({
        cardNumber: payment.cardNumber,
        expiry: payment.expiry,
        cvv: payment.cvv,
        amount,
      });

      logger.info(`Payment successful: ${result.transactionId}`);
      return result;
    } catch (error) {
      logger.error(`Gateway error: ${error.message}`);
      throw new Error(`Payment gateway failed: ${error.message}`);
    }
  }
}
