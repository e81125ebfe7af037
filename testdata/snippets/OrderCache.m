#import "OrderCache.h"

static NSString *const kOrdersKey = @"orders";

@interface OrderCache ()
@property (nonatomic, strong) NSMutableDictionary<NSString *, NSNumber *> *totals;
@property (nonatomic, assign) NSUInteger hits;
- (void)resetHitsKeepingTotals:(BOOL)keep;
- (NSUInteger)countOfTotals;
@end

@implementation OrderCache

- (instancetype)initWithCapacity:(NSUInteger)capacity {
    self = [super init];
    if (self) {
        _totals = [NSMutableDictionary dictionaryWithCapacity:capacity];
        _hits = 0;
    }
    return self;
}

- (NSNumber *)totalForCustomer:(NSString *)customer
                      inOrders:(NSArray<NSDictionary *> *)orders {
    NSNumber *cached = self.totals[customer];
    if (cached != nil) {
        self.hits += 1;
        return cached;
    }
    double sum = 0.0;
    for (NSDictionary *order in orders) {
        if ([order[@"customer"] isEqualToString:customer]) {
            sum += [order[@"amount"] doubleValue];
        }
    }
    self.totals[customer] = @(sum);
    return @(sum);
}

+ (NSArray<NSString *> *)sortedKeys:(NSDictionary *)map {
    return [[map allKeys] sortedArrayUsingComparator:^NSComparisonResult(id a, id b) {
        return [a compare:b];
    }];
}

- (void)clear {
    [self.totals removeAllObjects];
    NSLog(@"cleared %lu entries under %@", (unsigned long)self.hits, kOrdersKey);
}

@end
