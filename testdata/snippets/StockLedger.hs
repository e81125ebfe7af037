{-# LANGUAGE OverloadedStrings #-}
-- | A ledger of stock movements per warehouse.
module StockLedger
  ( Movement (..)
  , balance
  , report
  ) where

import qualified Data.Map.Strict as Map
import Data.List (sortOn)

data Movement = Movement
  { sku :: String
  , quantity :: Int
  , warehouse :: String
  } deriving (Show, Eq)

newtype Ledger = Ledger [Movement]

instance Semigroup Ledger where
  Ledger a <> Ledger b = Ledger (a ++ b)

instance Show Ledger where
  show (Ledger ms) = "Ledger of " ++ show (length ms) ++ " movements"
  showList ls rest = concatMap show ls ++ rest

-- | Stock per SKU after all movements.
balance :: Ledger -> Map.Map String Int
balance (Ledger ms) = foldr add Map.empty ms
  where
    add m acc = Map.insertWith (+) (sku m) (quantity m) acc

classify :: Int -> String
classify n
  | n < 0 = "negative"
  | n < 10 = "low"
  | otherwise = "ok"

report :: Ledger -> IO ()
report ledger = do
  let totals = Map.toList (balance ledger)
      sorted = sortOn snd totals
  mapM_ (\(s, n) -> putStrLn (s ++ ": " ++ classify n)) sorted
  {- Warn about
     negative stock. -}
  case filter ((< 0) . snd) sorted of
    [] -> return ()
    bad -> putStrLn ("negative: " ++ show (length bad))
